import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import {
  checkRecurrence,
  newCalendarObject,
  occurrencesIn,
  type CalendarEventFields,
} from './calendar-events';
import { parseOwnerDateTime, vtimezoneFor } from './calendar-time';

const BERLIN = 'Europe/Berlin';
const range = (start: string, end: string, zone = BERLIN) => ({
  start: DateTime.fromISO(start, { zone }),
  end: DateTime.fromISO(end, { zone }),
});
const ics = (...lines: string[]) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    ...lines,
    'END:VCALENDAR',
    '',
  ].join('\r\n');
const starts = (
  text: string,
  r = range('2026-11-30', '2026-12-21'),
  zone = BERLIN,
) =>
  occurrencesIn(text, r, zone).map((o) =>
    o.start.toISO({ suppressMilliseconds: true }),
  );

describe('calendar times', () => {
  it('reads a time without an offset in the owner zone and keeps an explicit offset as that instant', () => {
    const local = parseOwnerDateTime('2026-12-01T10:00', BERLIN, 'start');
    const offset = parseOwnerDateTime(
      '2026-12-01T10:00-05:00',
      BERLIN,
      'start',
    );
    expect(typeof local !== 'string' && local.toISO()).toBe(
      '2026-12-01T10:00:00.000+01:00',
    );
    expect(typeof offset !== 'string' && offset.toISO()).toBe(
      '2026-12-01T16:00:00.000+01:00',
    );
    expect(parseOwnerDateTime('tomorrow', BERLIN, 'start')).toBe(
      "start 'tomorrow' is not a date-time like 2026-12-01T10:00 (owner's time zone) or 2026-12-01T10:00+01:00.",
    );
  });

  it.each([BERLIN, 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata'])(
    'generates a VTIMEZONE for %s that ical.js resolves to the same instants as the tz database',
    (zone) => {
      const tz = new ICAL.Timezone({
        component: vtimezoneFor(zone, 2026),
        tzid: zone,
      });
      for (const month of [1, 3, 4, 7, 10, 11, 12])
        for (const hour of [1, 12]) {
          const wall = DateTime.fromObject(
            { year: 2026, month, day: 15, hour },
            { zone },
          );
          const viaIcal = ICAL.Time.fromData(
            { year: 2026, month, day: 15, hour, minute: 0, second: 0 },
            tz,
          ).toUnixTime();
          expect(viaIcal).toBe(wall.toSeconds());
        }
    },
  );
});

describe('recurrence', () => {
  it('normalizes a valid RRULE and names what is wrong with a bad one', () => {
    expect(checkRecurrence('RRULE:FREQ=WEEKLY;BYDAY=MO')).toBe(
      'FREQ=WEEKLY;BYDAY=MO',
    );
    expect(checkRecurrence('FREQ=WEEKLY;BYDAY=XX')).toEqual({
      error:
        'recurrence \'FREQ=WEEKLY;BYDAY=XX\' is not a valid RRULE (invalid BYDAY value "XX"), e.g. FREQ=WEEKLY;BYDAY=MO.',
    });
    expect(checkRecurrence('BYDAY=MO')).toEqual({
      error:
        "recurrence 'BYDAY=MO' needs FREQ (DAILY, WEEKLY, MONTHLY, YEARLY…), e.g. FREQ=WEEKLY;BYDAY=MO.",
    });
  });

  it('expands a weekly TZID series, drops an EXDATE given in UTC and moves an overridden instance', () => {
    const text = ics(
      'BEGIN:VEVENT',
      'UID:s1',
      'DTSTAMP:20261101T000000Z',
      'DTSTART;TZID=Europe/Berlin:20261201T100000',
      'DTEND;TZID=Europe/Berlin:20261201T110000',
      'RRULE:FREQ=WEEKLY',
      'EXDATE:20261208T090000Z',
      'SUMMARY:Standup',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:s1',
      'DTSTAMP:20261101T000000Z',
      'RECURRENCE-ID;TZID=Europe/Berlin:20261215T100000',
      'DTSTART;TZID=Europe/Berlin:20261216T140000',
      'DTEND;TZID=Europe/Berlin:20261216T150000',
      'SUMMARY:Standup (moved)',
      'END:VEVENT',
    );
    const found = occurrencesIn(
      text,
      range('2026-11-30', '2026-12-21'),
      BERLIN,
    );
    expect(
      found.map((o) => [
        o.start.toISO({ suppressMilliseconds: true }),
        o.title,
        o.uid,
      ]),
    ).toEqual([
      ['2026-12-01T10:00:00+01:00', 'Standup', 's1'],
      ['2026-12-16T14:00:00+01:00', 'Standup (moved)', 's1'],
    ]);
  });

  it('keeps a weekly 10:00 at 10:00 local across the DST change', () => {
    const text = ics(
      'BEGIN:VEVENT',
      'UID:s2',
      'DTSTAMP:20261101T000000Z',
      'DTSTART;TZID=Europe/Berlin:20270322T100000',
      'DURATION:PT30M',
      'RRULE:FREQ=WEEKLY;COUNT=3',
      'END:VEVENT',
    );
    expect(starts(text, range('2027-03-01', '2027-04-30'))).toEqual([
      '2027-03-22T10:00:00+01:00',
      '2027-03-29T10:00:00+02:00',
      '2027-04-05T10:00:00+02:00',
    ]);
  });

  it('writes an event ical.js and the tz database read back the same, with TZID and VTIMEZONE', () => {
    const start = DateTime.fromISO('2026-12-01T10:00', { zone: BERLIN });
    const fields: CalendarEventFields = {
      title: 'Dentist',
      allDay: false,
      start,
      end: start.plus({ hours: 1 }),
      location: 'Main St 1',
      description: null,
      recurrence: 'FREQ=WEEKLY;COUNT=2',
    };
    const text = newCalendarObject(
      'u1',
      fields,
      BERLIN,
      DateTime.fromISO('2026-11-28T12:00Z'),
    );
    expect(text).toContain('DTSTART;TZID=Europe/Berlin:20261201T100000');
    expect(text).toContain('BEGIN:VTIMEZONE');
    const ny = occurrencesIn(
      text,
      range('2026-11-30', '2026-12-21', 'America/New_York'),
      'America/New_York',
    );
    expect(
      ny.map((o) => [
        o.start.toISO({ suppressMilliseconds: true }),
        o.location,
      ]),
    ).toEqual([
      ['2026-12-01T04:00:00-05:00', 'Main St 1'],
      ['2026-12-08T04:00:00-05:00', 'Main St 1'],
    ]);
  });
});
