import { QUIET_HOURS_MAX_RANGES } from '@metatronos/shared-types';
import {
  formatActiveDays,
  formatQuietHours,
  isQuietMinute,
  localDateKey,
  nextPulseSlot,
  parseHm,
  pulseIntervalMinutes,
  pulseSlotsOfDay,
  PulseSlotSettings,
  quietHoursProblem,
  remainingPulsesToday,
} from './pulse-schedule';

const BERLIN = 'Europe/Berlin';
const EVERY_DAY = [0, 1, 2, 3, 4, 5, 6];
const WEEKDAYS = [1, 2, 3, 4, 5];

const at = (iso: string) => new Date(iso);
const isoList = (dates: Date[]) => dates.map((date) => date.toISOString());
const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Every two hours on weekdays, quiet 22:00–07:00: in Berlin winter, 08:00 … 20:00 local = 07:00Z … 19:00Z. */
const OFFICE: PulseSlotSettings = {
  activeDays: WEEKDAYS,
  pulsesPerDay: 12,
  quietHours: [{ start: '22:00', end: '07:00' }],
};

describe('pulseIntervalMinutes', () => {
  it('divides the day by the pulses per day', () => {
    expect([48, 24, 12, 6, 2].map(pulseIntervalMinutes)).toEqual([
      30, 60, 120, 240, 720,
    ]);
    expect(pulseIntervalMinutes(5)).toBeNaN();
    expect(pulseIntervalMinutes(0)).toBeNaN();
  });
});

describe('parseHm', () => {
  it('reads HH:mm with two digits each', () => {
    expect(parseHm('00:00')).toBe(0);
    expect(parseHm('07:30')).toBe(450);
    expect(parseHm('23:59')).toBe(1439);
    for (const bad of [
      '7:30',
      '24:00',
      '12:60',
      '',
      ' 07:30',
      '07:30:00',
      '07-30',
      '0730',
      'ab:cd',
    ]) {
      expect(parseHm(bad)).toBeNull();
    }
    expect(parseHm(730 as unknown as string)).toBeNull();
  });
});

describe('quietHoursProblem', () => {
  it('accepts valid lists, including the empty one and ranges crossing midnight', () => {
    expect(quietHoursProblem([])).toBeNull();
    expect(
      quietHoursProblem([
        { start: '22:00', end: '07:00' },
        { start: '12:00', end: '13:00' },
      ]),
    ).toBeNull();
    expect(
      quietHoursProblem(
        Array.from({ length: QUIET_HOURS_MAX_RANGES }, () => ({
          start: '01:00',
          end: '02:00',
        })),
      ),
    ).toBeNull();
  });

  it('names what is wrong and where', () => {
    expect(quietHoursProblem('22:00-07:00')).toBe(
      'quiet_hours must be a list of ranges like { "start": "22:00", "end": "07:00" }',
    );
    expect(quietHoursProblem(null)).toBe(
      'quiet_hours must be a list of ranges like { "start": "22:00", "end": "07:00" }',
    );
    expect(
      quietHoursProblem(
        Array.from({ length: QUIET_HOURS_MAX_RANGES + 1 }, () => ({
          start: '01:00',
          end: '02:00',
        })),
      ),
    ).toBe(
      `quiet_hours holds ${QUIET_HOURS_MAX_RANGES + 1} ranges; at most ${QUIET_HOURS_MAX_RANGES} are allowed`,
    );
    expect(quietHoursProblem([{ start: '22:00', end: '07:00' }, null])).toBe(
      'quiet_hours[1] must be an object like { "start": "22:00", "end": "07:00" }',
    );
    expect(quietHoursProblem([['22:00', '07:00']])).toBe(
      'quiet_hours[0] must be an object like { "start": "22:00", "end": "07:00" }',
    );
    expect(
      quietHoursProblem([
        { start: '22:00', end: '07:00' },
        { start: '12:00', end: '7:30' },
      ]),
    ).toBe('quiet_hours[1].end must be a time like "07:30"');
    expect(quietHoursProblem([{ start: 1320, end: '07:00' }])).toBe(
      'quiet_hours[0].start must be a time like "22:00"',
    );
    expect(quietHoursProblem([{ end: '07:00' }])).toBe(
      'quiet_hours[0].start must be a time like "22:00"',
    );
    expect(
      quietHoursProblem([{ start: '22:00', end: '07:00', note: 'sleep' }]),
    ).toBe(
      'quiet_hours[0] has an unknown field "note" (only "start" and "end" are allowed)',
    );
    expect(quietHoursProblem([{ start: '22:00', end: '22:00' }])).toBe(
      'quiet_hours[0] starts and ends at 22:00; a range needs two different times, e.g. "22:00" to "07:00"',
    );
  });
});

describe('isQuietMinute', () => {
  it('takes the start, not the end, and crosses midnight when the end is before the start', () => {
    const night = [{ start: '22:00', end: '07:00' }];
    expect(isQuietMinute(22 * 60 - 1, night)).toBe(false);
    expect(isQuietMinute(22 * 60, night)).toBe(true);
    expect(isQuietMinute(1439, night)).toBe(true);
    expect(isQuietMinute(0, night)).toBe(true);
    expect(isQuietMinute(7 * 60 - 1, night)).toBe(true);
    expect(isQuietMinute(7 * 60, night)).toBe(false);
    expect(isQuietMinute(12 * 60, night)).toBe(false);
  });

  it('reads an end of 00:00 as midnight', () => {
    expect(
      isQuietMinute(23 * 60 + 30, [{ start: '23:00', end: '00:00' }]),
    ).toBe(true);
    expect(isQuietMinute(0, [{ start: '23:00', end: '00:00' }])).toBe(false);
    expect(
      isQuietMinute(23 * 60 + 30, [{ start: '23:30', end: '00:00' }]),
    ).toBe(true);
    expect(
      isQuietMinute(23 * 60 + 30, [{ start: '22:00', end: '23:30' }]),
    ).toBe(false);
  });

  it('ignores invalid ranges and checks every range', () => {
    expect(isQuietMinute(600, [{ start: '10:00', end: '10:00' }])).toBe(false);
    expect(isQuietMinute(600, [{ start: '10:00', end: 'later' }])).toBe(false);
    expect(isQuietMinute(600, [])).toBe(false);
    expect(
      isQuietMinute(12 * 60 + 30, [
        { start: '22:00', end: '07:00' },
        { start: '12:00', end: '13:00' },
      ]),
    ).toBe(true);
  });
});

describe('pulseSlotsOfDay', () => {
  it('keeps the slots of an active day outside quiet hours', () => {
    // Monday 2026-01-05, Berlin (UTC+1).
    expect(
      isoList(pulseSlotsOfDay(OFFICE, BERLIN, at('2026-01-05T12:00:00Z'))),
    ).toEqual([
      '2026-01-05T07:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
      '2026-01-05T11:00:00.000Z',
      '2026-01-05T13:00:00.000Z',
      '2026-01-05T15:00:00.000Z',
      '2026-01-05T17:00:00.000Z',
      '2026-01-05T19:00:00.000Z',
    ]);
    // Six a day, every day, no quiet hours: 00:00, 04:00 … 20:00 in New York (UTC-5).
    expect(
      isoList(
        pulseSlotsOfDay(
          { activeDays: EVERY_DAY, pulsesPerDay: 6, quietHours: [] },
          'America/New_York',
          at('2026-01-05T12:00:00Z'),
        ),
      ),
    ).toEqual([
      '2026-01-05T05:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
      '2026-01-05T13:00:00.000Z',
      '2026-01-05T17:00:00.000Z',
      '2026-01-05T21:00:00.000Z',
      '2026-01-06T01:00:00.000Z',
    ]);
  });

  it('takes the local day of the instant, not the UTC one', () => {
    // 2026-01-09T23:30Z is already Saturday 00:30 in Berlin: no office pulses.
    expect(pulseSlotsOfDay(OFFICE, BERLIN, at('2026-01-09T23:30:00Z'))).toEqual(
      [],
    );
    expect(
      pulseSlotsOfDay(OFFICE, BERLIN, at('2026-01-09T22:59:59Z')),
    ).toHaveLength(7);
  });

  it('drops the 23:30 slot for a quiet range ending at 00:00, not the 00:00 one', () => {
    const slots = pulseSlotsOfDay(
      {
        activeDays: EVERY_DAY,
        pulsesPerDay: 48,
        quietHours: [{ start: '23:00', end: '00:00' }],
      },
      BERLIN,
      at('2026-01-05T12:00:00Z'),
    );
    expect(slots).toHaveLength(46);
    expect(iso(slots[0])).toBe('2026-01-04T23:00:00.000Z'); // 00:00 local
    expect(iso(slots[slots.length - 1])).toBe('2026-01-05T21:30:00.000Z'); // 22:30 local
    const fromHalfPast = pulseSlotsOfDay(
      {
        activeDays: EVERY_DAY,
        pulsesPerDay: 48,
        quietHours: [{ start: '22:00', end: '23:30' }],
      },
      BERLIN,
      at('2026-01-05T12:00:00Z'),
    );
    expect(fromHalfPast).toHaveLength(45);
    expect(iso(fromHalfPast[fromHalfPast.length - 1])).toBe(
      '2026-01-05T22:30:00.000Z',
    ); // 23:30 local
  });

  it('yields nothing for an unknown pulses-per-day value', () => {
    expect(
      pulseSlotsOfDay(
        { ...OFFICE, pulsesPerDay: 5 as PulseSlotSettings['pulsesPerDay'] },
        BERLIN,
        at('2026-01-05T12:00:00Z'),
      ),
    ).toEqual([]);
  });

  describe('on a DST change (Europe/Berlin, 48 a day)', () => {
    const HALF_HOURLY: PulseSlotSettings = {
      activeDays: EVERY_DAY,
      pulsesPerDay: 48,
      quietHours: [],
    };
    const gaps = (slots: Date[]) =>
      slots
        .slice(1)
        .map((slot, i) => (slot.getTime() - slots[i].getTime()) / 60_000);

    it('spring forward 2026-03-29: 02:00 and 02:30 do not exist and fold onto 03:00 and 03:30: 46 slots, 30 minutes apart', () => {
      const slots = pulseSlotsOfDay(
        HALF_HOURLY,
        BERLIN,
        at('2026-03-29T12:00:00Z'),
      );
      expect(slots).toHaveLength(46);
      expect(new Set(slots.map((slot) => slot.getTime())).size).toBe(46);
      expect(gaps(slots).every((gap) => gap === 30)).toBe(true);
      expect(isoList(slots.slice(2, 6))).toEqual([
        '2026-03-29T00:00:00.000Z', // 01:00 CET
        '2026-03-29T00:30:00.000Z', // 01:30 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST
        '2026-03-29T01:30:00.000Z', // 03:30 CEST
      ]);
      expect(iso(slots[0])).toBe('2026-03-28T23:00:00.000Z');
      expect(iso(slots[45])).toBe('2026-03-29T21:30:00.000Z');
    });

    it('fall back 2026-10-25: 02:00 and 02:30 fire once each (luxon picks the second pass, CET): 48 slots', () => {
      const slots = pulseSlotsOfDay(
        HALF_HOURLY,
        BERLIN,
        at('2026-10-25T12:00:00Z'),
      );
      expect(slots).toHaveLength(48);
      expect(new Set(slots.map((slot) => slot.getTime())).size).toBe(48);
      expect(isoList(slots.slice(3, 7))).toEqual([
        '2026-10-24T23:30:00.000Z', // 01:30 CEST
        '2026-10-25T01:00:00.000Z', // 02:00 CET
        '2026-10-25T01:30:00.000Z', // 02:30 CET
        '2026-10-25T02:00:00.000Z', // 03:00 CET
      ]);
      expect(gaps(slots).filter((gap) => gap !== 30)).toEqual([90]);
      expect(iso(slots[47])).toBe('2026-10-25T22:30:00.000Z');
    });

    it('every two hours on the spring-forward day: 02:00 becomes 03:00 CEST, 12 slots', () => {
      const slots = pulseSlotsOfDay(
        { ...HALF_HOURLY, pulsesPerDay: 12 },
        BERLIN,
        at('2026-03-29T12:00:00Z'),
      );
      expect(isoList(slots.slice(0, 3))).toEqual([
        '2026-03-28T23:00:00.000Z',
        '2026-03-29T01:00:00.000Z',
        '2026-03-29T02:00:00.000Z',
      ]);
      expect(slots).toHaveLength(12);
    });
  });
});

describe('nextPulseSlot', () => {
  it('answers the first eligible slot strictly after the instant', () => {
    expect(iso(nextPulseSlot(OFFICE, BERLIN, at('2026-01-05T06:00:00Z')))).toBe(
      '2026-01-05T07:00:00.000Z',
    );
    expect(iso(nextPulseSlot(OFFICE, BERLIN, at('2026-01-05T07:00:00Z')))).toBe(
      '2026-01-05T09:00:00.000Z',
    );
    expect(
      iso(nextPulseSlot(OFFICE, BERLIN, at('2026-01-05T06:59:59.999Z'))),
    ).toBe('2026-01-05T07:00:00.000Z');
    // After Monday's last slot: Tuesday 08:00, quiet hours skipped.
    expect(iso(nextPulseSlot(OFFICE, BERLIN, at('2026-01-05T19:00:00Z')))).toBe(
      '2026-01-06T07:00:00.000Z',
    );
  });

  it('skips inactive days across the week boundary', () => {
    // Friday evening → Monday 08:00.
    expect(iso(nextPulseSlot(OFFICE, BERLIN, at('2026-01-09T20:00:00Z')))).toBe(
      '2026-01-12T07:00:00.000Z',
    );
    // Sundays only, twice a day (00:00, 12:00): from Sunday 12:00 to the next Sunday 00:00.
    const sundays: PulseSlotSettings = {
      activeDays: [0],
      pulsesPerDay: 2,
      quietHours: [],
    };
    expect(
      iso(nextPulseSlot(sundays, BERLIN, at('2026-01-04T11:00:00Z'))),
    ).toBe('2026-01-10T23:00:00.000Z');
    // Saturdays only: from Saturday noon to the next Saturday, a full week ahead.
    const saturdays: PulseSlotSettings = {
      activeDays: [6],
      pulsesPerDay: 2,
      quietHours: [],
    };
    expect(
      iso(nextPulseSlot(saturdays, BERLIN, at('2026-01-10T11:00:00Z'))),
    ).toBe('2026-01-16T23:00:00.000Z');
  });

  it('is null with no active day, or when every slot is quiet', () => {
    expect(
      nextPulseSlot(
        { ...OFFICE, activeDays: [] },
        BERLIN,
        at('2026-01-05T06:00:00Z'),
      ),
    ).toBeNull();
    // 00:00–23:59 leaves only 23:59 unquiet, and no slot falls on it (the last is 23:30 at most).
    const almostAllDay = [{ start: '00:00', end: '23:59' }];
    for (const pulsesPerDay of [48, 24, 12, 6, 2] as const) {
      expect(
        nextPulseSlot(
          { activeDays: EVERY_DAY, pulsesPerDay, quietHours: almostAllDay },
          BERLIN,
          at('2026-01-05T06:00:00Z'),
        ),
      ).toBeNull();
    }
    // Two halves that together cover the whole day.
    const halves = [
      { start: '12:00', end: '00:00' },
      { start: '00:00', end: '12:00' },
    ];
    expect(
      nextPulseSlot(
        { activeDays: EVERY_DAY, pulsesPerDay: 48, quietHours: halves },
        BERLIN,
        at('2026-01-05T06:00:00Z'),
      ),
    ).toBeNull();
    // Quiet except 23:00 onwards: 23:00 local is the next slot.
    expect(
      iso(
        nextPulseSlot(
          {
            activeDays: EVERY_DAY,
            pulsesPerDay: 48,
            quietHours: [{ start: '00:00', end: '23:00' }],
          },
          BERLIN,
          at('2026-01-05T06:00:00Z'),
        ),
      ),
    ).toBe('2026-01-05T22:00:00.000Z');
    expect(nextPulseSlot(OFFICE, BERLIN, new Date(Number.NaN))).toBeNull();
  });

  it('reads an unknown zone as UTC', () => {
    expect(
      iso(nextPulseSlot(OFFICE, 'Not/AZone', at('2026-01-05T06:00:00Z'))),
    ).toBe('2026-01-05T08:00:00.000Z');
  });
});

describe('remainingPulsesToday', () => {
  it('counts the slots still ahead today, a slot due right now included', () => {
    expect(
      remainingPulsesToday(OFFICE, BERLIN, at('2026-01-05T06:00:00Z'), null),
    ).toBe(7);
    expect(
      remainingPulsesToday(OFFICE, BERLIN, at('2026-01-05T07:00:00Z'), null),
    ).toBe(7);
    expect(
      remainingPulsesToday(
        OFFICE,
        BERLIN,
        at('2026-01-05T07:00:00.001Z'),
        null,
      ),
    ).toBe(6);
    expect(
      remainingPulsesToday(OFFICE, BERLIN, at('2026-01-05T19:00:00Z'), null),
    ).toBe(1);
    expect(
      remainingPulsesToday(OFFICE, BERLIN, at('2026-01-05T19:00:01Z'), null),
    ).toBe(0);
  });

  it('does not count a slot already served by the last pulse', () => {
    expect(
      remainingPulsesToday(
        OFFICE,
        BERLIN,
        at('2026-01-05T07:00:00Z'),
        at('2026-01-05T07:00:00Z'),
      ),
    ).toBe(6);
    expect(
      remainingPulsesToday(
        OFFICE,
        BERLIN,
        at('2026-01-05T08:00:00Z'),
        at('2026-01-05T12:00:00Z'),
      ),
    ).toBe(4);
    expect(
      remainingPulsesToday(
        OFFICE,
        BERLIN,
        at('2026-01-05T06:00:00Z'),
        at('2026-01-04T19:00:00Z'),
      ),
    ).toBe(7);
  });

  it('is 0 on an inactive day', () => {
    // Saturday 2026-01-10.
    expect(
      remainingPulsesToday(OFFICE, BERLIN, at('2026-01-10T06:00:00Z'), null),
    ).toBe(0);
  });
});

describe('localDateKey', () => {
  it('changes at local midnight, not UTC midnight', () => {
    expect(localDateKey(at('2026-01-05T22:59:59.999Z'), BERLIN)).toBe(
      '2026-01-05',
    );
    expect(localDateKey(at('2026-01-05T23:00:00Z'), BERLIN)).toBe('2026-01-06');
    expect(localDateKey(at('2026-01-05T23:00:00Z'), 'UTC')).toBe('2026-01-05');
    expect(localDateKey(at('2026-01-06T04:59:59Z'), 'America/New_York')).toBe(
      '2026-01-05',
    );
    expect(localDateKey(at('2026-01-06T05:00:00Z'), 'America/New_York')).toBe(
      '2026-01-06',
    );
    // Summer time in Berlin: midnight is 22:00 UTC.
    expect(localDateKey(at('2026-07-01T22:00:00Z'), BERLIN)).toBe('2026-07-02');
  });

  it('reads an unknown zone as UTC and an invalid date as ""', () => {
    expect(localDateKey(at('2026-01-05T23:00:00Z'), 'Not/AZone')).toBe(
      '2026-01-05',
    );
    expect(localDateKey(new Date(Number.NaN), BERLIN)).toBe('');
  });
});

describe('formatQuietHours', () => {
  it('lists the ranges, or none', () => {
    expect(
      formatQuietHours([
        { start: '22:00', end: '07:00' },
        { start: '12:00', end: '13:00' },
      ]),
    ).toBe('22:00–07:00, 12:00–13:00');
    expect(formatQuietHours([])).toBe('none');
  });
});

describe('formatActiveDays', () => {
  it('lists the days Monday first, or says every day / none', () => {
    expect(formatActiveDays(WEEKDAYS)).toBe('Mon, Tue, Wed, Thu, Fri');
    expect(formatActiveDays([6, 0])).toBe('Sat, Sun');
    expect(formatActiveDays([0, 0, 9, 1, -1, 2.5])).toBe('Mon, Sun');
    expect(formatActiveDays(EVERY_DAY)).toBe('every day');
    expect(formatActiveDays([])).toBe('none');
  });
});
