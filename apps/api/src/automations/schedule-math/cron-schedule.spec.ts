import { CRON_EXPRESSION_MAX_LENGTH } from '@metatronos/shared-types';
import {
  checkCronExpression,
  cronOccurrencesBetween,
  describeCron,
  nextCronRuns,
} from './cron-schedule';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';
const HELP =
  'Use five fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * 1-5".';

const isoList = (dates: Date[]) => dates.map((date) => date.toISOString());
const at = (iso: string) => new Date(iso);

function runsOf(
  expression: string,
  timezone: string,
  from: string,
  count = 3,
): string[] {
  const check = checkCronExpression(expression, timezone, at(from), count);
  if (!check.ok) throw new Error(`refused: ${check.error}`);
  return isoList(check.nextRuns);
}

function errorOf(expression: unknown, timezone = BERLIN): string {
  const check = checkCronExpression(
    expression as string,
    timezone,
    at('2026-01-02T07:00:00Z'),
  );
  if (check.ok)
    throw new Error(`accepted: ${isoList(check.nextRuns).join(', ')}`);
  return check.error;
}

describe('checkCronExpression', () => {
  it('answers the next runs on weekdays in Europe/Berlin, strictly after the start', () => {
    // Friday 2026-01-02 08:00:00.500 local: today's 08:00 has passed by half a second.
    expect(runsOf('0 8 * * 1-5', BERLIN, '2026-01-02T07:00:00.500Z')).toEqual([
      '2026-01-05T07:00:00.000Z',
      '2026-01-06T07:00:00.000Z',
      '2026-01-07T07:00:00.000Z',
    ]);
    // Exactly at a run time: that run is not "after".
    expect(
      runsOf('0 8 * * 1-5', BERLIN, '2026-01-05T07:00:00.000Z', 1),
    ).toEqual(['2026-01-06T07:00:00.000Z']);
    expect(
      runsOf('0 8 * * 1-5', BERLIN, '2026-01-05T06:59:59.999Z', 1),
    ).toEqual(['2026-01-05T07:00:00.000Z']);
    // Summer time: 08:00 CEST is 06:00 UTC.
    expect(runsOf('0 8 * * *', BERLIN, '2026-07-01T00:00:00Z', 2)).toEqual([
      '2026-07-01T06:00:00.000Z',
      '2026-07-02T06:00:00.000Z',
    ]);
  });

  it('answers the next runs in America/New_York, winter and summer', () => {
    expect(runsOf('30 9 * * *', NEW_YORK, '2026-01-15T00:00:00Z', 2)).toEqual([
      '2026-01-15T14:30:00.000Z',
      '2026-01-16T14:30:00.000Z',
    ]);
    expect(runsOf('30 9 * * *', NEW_YORK, '2026-07-01T12:00:00Z')).toEqual([
      '2026-07-01T13:30:00.000Z',
      '2026-07-02T13:30:00.000Z',
      '2026-07-03T13:30:00.000Z',
    ]);
  });

  it('returns exactly `count` runs (none for 0)', () => {
    expect(runsOf('*/5 * * * *', 'UTC', '2026-01-01T00:02:00Z', 5)).toEqual([
      '2026-01-01T00:05:00.000Z',
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:15:00.000Z',
      '2026-01-01T00:20:00.000Z',
      '2026-01-01T00:25:00.000Z',
    ]);
    expect(runsOf('*/5 * * * *', 'UTC', '2026-01-01T00:02:00Z', 0)).toEqual([]);
  });

  it('accepts names, a Sunday written 7, a leading seconds field and presets', () => {
    expect(runsOf('0 8 * jan mon', BERLIN, '2026-01-02T00:00:00Z', 2)).toEqual([
      '2026-01-05T07:00:00.000Z',
      '2026-01-12T07:00:00.000Z',
    ]);
    expect(runsOf('0 8 * * 7', BERLIN, '2026-01-02T00:00:00Z', 1)).toEqual([
      '2026-01-04T07:00:00.000Z',
    ]);
    expect(runsOf('30 0 8 * * *', BERLIN, '2026-01-02T00:00:00Z', 1)).toEqual([
      '2026-01-02T07:00:30.000Z',
    ]);
    expect(runsOf('@daily', BERLIN, '2026-01-02T00:00:00Z', 1)).toEqual([
      '2026-01-02T23:00:00.000Z',
    ]);
    expect(runsOf('@weekdays', BERLIN, '2026-01-02T00:00:00Z', 1)).toEqual([
      '2026-01-04T23:00:00.000Z',
    ]);
    expect(runsOf('@hourly', BERLIN, '2026-01-02T00:10:00Z', 1)).toEqual([
      '2026-01-02T01:00:00.000Z',
    ]);
  });

  it('reads day-of-month OR day-of-week when both are restricted (as cron does)', () => {
    // Day 30 never comes in February, but every Sunday to Friday does.
    expect(runsOf('0 0 30 2 0-5', BERLIN, '2026-01-02T00:00:00Z', 2)).toEqual([
      '2026-01-31T23:00:00.000Z',
      '2026-02-01T23:00:00.000Z',
    ]);
  });

  describe('on a DST change', () => {
    it('Europe/Berlin spring forward: 02:30 does not exist on 2026-03-29, cron runs at 03:00 CEST instead', () => {
      expect(runsOf('30 2 * * *', BERLIN, '2026-03-28T12:00:00Z')).toEqual([
        '2026-03-29T01:00:00.000Z',
        '2026-03-30T00:30:00.000Z',
        '2026-03-31T00:30:00.000Z',
      ]);
      expect(runsOf('*/30 * * * *', BERLIN, '2026-03-29T00:10:00Z', 4)).toEqual(
        [
          '2026-03-29T00:30:00.000Z', // 01:30 CET
          '2026-03-29T01:00:00.000Z', // 03:00 CEST (02:00 and 02:30 do not exist)
          '2026-03-29T01:30:00.000Z',
          '2026-03-29T02:00:00.000Z',
        ],
      );
    });

    it('Europe/Berlin fall back: a daily 02:30 runs once, at the first 02:30 (CEST); an every-30-minutes job runs in both passes', () => {
      expect(runsOf('30 2 * * *', BERLIN, '2026-10-24T12:00:00Z')).toEqual([
        '2026-10-25T00:30:00.000Z',
        '2026-10-26T01:30:00.000Z',
        '2026-10-27T01:30:00.000Z',
      ]);
      expect(runsOf('*/30 * * * *', BERLIN, '2026-10-24T23:10:00Z', 6)).toEqual(
        [
          '2026-10-24T23:30:00.000Z', // 01:30 CEST
          '2026-10-25T00:00:00.000Z', // 02:00 CEST
          '2026-10-25T00:30:00.000Z', // 02:30 CEST
          '2026-10-25T01:00:00.000Z', // 02:00 CET
          '2026-10-25T01:30:00.000Z', // 02:30 CET
          '2026-10-25T02:00:00.000Z', // 03:00 CET
        ],
      );
    });

    it('America/New_York: 02:30 on 2026-03-08 becomes 03:00 EDT; 01:30 on 2026-11-01 runs once (EDT)', () => {
      expect(runsOf('30 2 * * *', NEW_YORK, '2026-03-07T12:00:00Z', 2)).toEqual(
        ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
      );
      expect(runsOf('30 1 * * *', NEW_YORK, '2026-10-31T12:00:00Z', 2)).toEqual(
        ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
      );
    });
  });

  describe('refuses', () => {
    it('what is not text, empty or too long', () => {
      expect(errorOf(42)).toBe(`The cron expression must be text. ${HELP}`);
      expect(errorOf(undefined)).toBe(
        `The cron expression must be text. ${HELP}`,
      );
      expect(errorOf('')).toBe(`The cron expression is empty. ${HELP}`);
      expect(errorOf('  \t ')).toBe(`The cron expression is empty. ${HELP}`);
      const long = `0 8 * * 1-5${' '.repeat(CRON_EXPRESSION_MAX_LENGTH)}`;
      expect(errorOf(long)).toBe(
        `The cron expression is ${long.length} characters long; at most ${CRON_EXPRESSION_MAX_LENGTH} are allowed. ${HELP}`,
      );
      // Exactly the limit (padding included) is fine.
      expect(
        checkCronExpression(
          '0 8 * * *'.padEnd(CRON_EXPRESSION_MAX_LENGTH),
          BERLIN,
          at('2026-01-02T00:00:00Z'),
        ).ok,
      ).toBe(true);
    });

    it('another field count', () => {
      expect(errorOf('x')).toBe(
        `Invalid cron expression "x": it has 1 field, but 5 are needed (or 6 with a leading seconds field). ${HELP}`,
      );
      expect(errorOf('0 8 * *')).toBe(
        `Invalid cron expression "0 8 * *": it has 4 fields, but 5 are needed (or 6 with a leading seconds field). ${HELP}`,
      );
      expect(errorOf('0 0 8 * * * 2026')).toContain('it has 7 fields');
    });

    it('unknown presets', () => {
      expect(errorOf('@reboot')).toBe(
        'Invalid cron expression "@reboot": unknown preset (known: @yearly, @monthly, @weekly, @daily, @hourly, ' +
          `@minutely, @secondly, @weekdays, @weekends). ${HELP}`,
      );
    });

    it('fields cron cannot read, naming the field', () => {
      expect(errorOf('61 * * * *')).toBe(
        `Invalid cron expression "61 * * * *": "61" is out of range for the minute field (0-59). ${HELP}`,
      );
      expect(errorOf('0 24 * * *')).toContain(
        '"24" is out of range for the hour field (0-23)',
      );
      expect(errorOf('0 8 0 * *')).toContain(
        '"0" is out of range for the day-of-month field (1-31)',
      );
      expect(errorOf('0 8 * 13 *')).toContain(
        '"13" is out of range for the month field (1-12)',
      );
      expect(errorOf('0 8 * * 8')).toContain(
        '"8" is out of range for the day-of-week field (0-7)',
      );
      expect(errorOf('5-3 * * * *')).toContain(
        'the range "5-3" in the minute field runs backwards',
      );
      expect(errorOf('*/0 * * * *')).toContain(
        'the step in "*/0" (minute field) is zero',
      );
      expect(errorOf('0 8 ? * *')).toContain(
        '"?" in the day-of-month field is not a number',
      );
      expect(errorOf('0 8 1#2 * *')).toContain(
        '"1#2" in the day-of-month field is not a number',
      );
      expect(errorOf('0 8 * * 1,')).toContain(
        'the day-of-week field "1," has an empty list item',
      );
      expect(errorOf('0 8 * * Monday')).toContain(
        '"Monday" in the day-of-week field is not a weekday (sun–sat) name',
      );
      expect(errorOf('0 8 L * *')).toContain(
        'the day-of-month field cannot hold letters like "L"',
      );
      expect(errorOf('mon 8 * * *')).toContain(
        'the minute field cannot hold letters like "mon"',
      );
    });

    it('an unknown timezone', () => {
      expect(errorOf('0 8 * * *', 'Mars/Olympus')).toBe(
        'Invalid timezone "Mars/Olympus": use an IANA zone name such as "Europe/Berlin".',
      );
      expect(errorOf('0 8 * * *', '')).toBe(
        'Invalid timezone "": use an IANA zone name such as "Europe/Berlin".',
      );
    });

    it('schedules that run more often than once a minute', () => {
      expect(errorOf('*/10 * * * * *')).toBe(
        'Cron expression "*/10 * * * * *" runs more often than once a minute (its seconds field "*/10" fires 6 times ' +
          'in every matching minute). A job may run at most once a minute: use five fields, e.g. "* * * * *" for ' +
          'every minute or "*/5 * * * *" for every five minutes.',
      );
      expect(errorOf('0,30 * * * * *')).toContain('"0,30" fires 2 times');
      expect(errorOf('* * * * * *')).toContain('more often than once a minute');
      expect(errorOf('@secondly')).toContain('more often than once a minute');
      // Once a minute is the limit, and allowed.
      expect(runsOf('* * * * *', 'UTC', '2026-01-01T00:00:30Z', 2)).toEqual([
        '2026-01-01T00:01:00.000Z',
        '2026-01-01T00:02:00.000Z',
      ]);
      expect(runsOf('15 * * * * *', 'UTC', '2026-01-01T00:00:30Z', 2)).toEqual([
        '2026-01-01T00:01:15.000Z',
        '2026-01-01T00:02:15.000Z',
      ]);
    });

    it('schedules that never run, quickly', () => {
      const started = performance.now();
      expect(errorOf('0 0 30 2 *')).toBe(
        'Cron expression "0 0 30 2 *" never runs: there is no day 30 in February.',
      );
      expect(errorOf('0 0 31 2,4,6,9,11 *')).toBe(
        'Cron expression "0 0 31 2,4,6,9,11 *" never runs: there is no day 31 in February, April, June, September and November.',
      );
      expect(errorOf('0 0 30,31 feb *')).toBe(
        'Cron expression "0 0 30,31 feb *" never runs: there is no day 30 or 31 in February.',
      );
      // The messages show the static check answered (the 8-year search says otherwise); the bound
      // only catches a pathological one, with room for a busy machine's scheduling and GC pauses.
      expect(performance.now() - started).toBeLessThan(1_000);
    });
  });

  it('accepts February 29th (leap years)', () => {
    expect(runsOf('0 0 29 2 *', 'UTC', '2026-01-01T00:00:00Z', 1)).toEqual([
      '2028-02-29T00:00:00.000Z',
    ]);
  });
});

describe('nextCronRuns', () => {
  it('answers the occurrences strictly after the instant', () => {
    expect(
      isoList(
        nextCronRuns('0 8 * * 1-5', BERLIN, at('2026-01-05T07:00:00Z'), 2),
      ),
    ).toEqual(['2026-01-06T07:00:00.000Z', '2026-01-07T07:00:00.000Z']);
  });

  it('is empty, without throwing, for anything refused', () => {
    expect(
      nextCronRuns('nonsense', BERLIN, at('2026-01-05T07:00:00Z'), 3),
    ).toEqual([]);
    expect(
      nextCronRuns('*/10 * * * * *', BERLIN, at('2026-01-05T07:00:00Z'), 3),
    ).toEqual([]);
    expect(
      nextCronRuns('0 0 30 2 *', BERLIN, at('2026-01-05T07:00:00Z'), 3),
    ).toEqual([]);
    expect(
      nextCronRuns('0 8 * * *', 'Nowhere/City', at('2026-01-05T07:00:00Z'), 3),
    ).toEqual([]);
    expect(nextCronRuns('0 8 * * *', BERLIN, new Date(Number.NaN), 3)).toEqual(
      [],
    );
    expect(
      nextCronRuns('0 8 * * *', BERLIN, at('2026-01-05T07:00:00Z'), 0),
    ).toEqual([]);
    expect(
      nextCronRuns(
        null as unknown as string,
        BERLIN,
        at('2026-01-05T07:00:00Z'),
        3,
      ),
    ).toEqual([]);
  });
});

describe('cronOccurrencesBetween', () => {
  it('counts the occurrences in (after, until] and names the latest', () => {
    expect(
      cronOccurrencesBetween(
        '*/5 * * * *',
        'UTC',
        at('2026-01-01T00:00:00Z'),
        at('2026-01-01T01:00:00Z'),
      ),
    ).toEqual({
      count: 12,
      latest: at('2026-01-01T01:00:00Z'),
    });
    // Friday 08:00 (excluded) to the next Friday 08:00 (included): Monday to Friday.
    expect(
      cronOccurrencesBetween(
        '0 8 * * 1-5',
        BERLIN,
        at('2026-01-02T07:00:00Z'),
        at('2026-01-09T07:00:00Z'),
      ),
    ).toEqual({
      count: 5,
      latest: at('2026-01-09T07:00:00Z'),
    });
    expect(
      cronOccurrencesBetween(
        '0 8 * * 1-5',
        BERLIN,
        at('2026-01-02T07:00:00Z'),
        at('2026-01-09T06:59:59.999Z'),
      ),
    ).toEqual({ count: 4, latest: at('2026-01-08T07:00:00Z') });
  });

  it('stops counting at the cap but still names the true latest occurrence', () => {
    expect(
      cronOccurrencesBetween(
        '* * * * *',
        'UTC',
        at('2026-01-01T00:00:00Z'),
        at('2026-01-10T00:00:30Z'),
        100,
      ),
    ).toEqual({ count: 100, latest: at('2026-01-10T00:00:00Z') });
    expect(
      cronOccurrencesBetween(
        '0 8 * * 1-5',
        BERLIN,
        at('2026-01-02T07:00:00Z'),
        at('2026-01-09T07:00:00Z'),
        2,
      ),
    ).toEqual({ count: 2, latest: at('2026-01-09T07:00:00Z') });
    expect(
      cronOccurrencesBetween(
        '0 8 * * 1-5',
        BERLIN,
        at('2026-01-02T07:00:00Z'),
        at('2026-01-09T07:00:00Z'),
        5,
      ),
    ).toEqual({ count: 5, latest: at('2026-01-09T07:00:00Z') });
  });

  it('finds nothing in an empty interval, before the first occurrence, or for a refused expression', () => {
    const none = { count: 0, latest: null };
    expect(
      cronOccurrencesBetween(
        '0 8 * * *',
        BERLIN,
        at('2026-01-05T07:30:00Z'),
        at('2026-01-06T06:59:59Z'),
      ),
    ).toEqual(none);
    expect(
      cronOccurrencesBetween(
        '0 8 * * *',
        BERLIN,
        at('2026-01-06T07:00:00Z'),
        at('2026-01-06T07:00:00Z'),
      ),
    ).toEqual(none);
    expect(
      cronOccurrencesBetween(
        '0 8 * * *',
        BERLIN,
        at('2026-01-07T00:00:00Z'),
        at('2026-01-06T00:00:00Z'),
      ),
    ).toEqual(none);
    expect(
      cronOccurrencesBetween(
        'bad',
        BERLIN,
        at('2026-01-01T00:00:00Z'),
        at('2026-02-01T00:00:00Z'),
      ),
    ).toEqual(none);
    expect(
      cronOccurrencesBetween(
        '* * * * *',
        BERLIN,
        at('2026-01-01T00:00:00Z'),
        at('2026-02-01T00:00:00Z'),
        0,
      ),
    ).toEqual(none);
  });
});

describe('describeCron', () => {
  it('puts the schedule in words, 24-hour clock', () => {
    expect(describeCron('0 8 * * 1-5')).toBe('At 08:00, Monday through Friday');
    expect(describeCron('*/5 * * * *')).toBe('Every 5 minutes');
    expect(describeCron('30 17 * * *')).toBe('At 17:30');
    expect(describeCron('30 0 8 * * *')).toBe('At 08:00:30');
  });

  it("spells out cron's presets, which cronstrue partly does not know", () => {
    expect(describeCron('@weekdays')).toBe('At 00:00, Monday through Friday');
    expect(describeCron('@daily')).toBe('At 00:00');
  });

  it('falls back to the expression itself', () => {
    expect(describeCron('nonsense')).toBe('nonsense');
    expect(describeCron('0 8 * *')).toBe('0 8 * *');
  });
});
