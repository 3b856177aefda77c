import IcalJs from 'ical.js';
import { checkRecurrence } from './calendar-events';
import { ICAL, icalLoaded } from './ical';

describe('ical.js loaded at first use', () => {
  it('is not loaded by importing the calendar code, and loads at the first use', () => {
    expect(icalLoaded()).toBe(false);
    expect(checkRecurrence('FREQ=WEEKLY;BYDAY=TU')).toBe(
      'FREQ=WEEKLY;BYDAY=TU',
    );
    expect(icalLoaded()).toBe(true);
  });

  it('reads as the package itself: constructors, instanceof, static members, functions', () => {
    expect(ICAL.Component).toBe(IcalJs.Component);
    const calendar = new ICAL.Component('vcalendar');
    expect(calendar).toBeInstanceOf(IcalJs.Component);
    expect(ICAL.Timezone.utcTimezone).toBe(IcalJs.Timezone.utcTimezone);
    const parsed = ICAL.parse('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n');
    expect(new ICAL.Component(parsed).name).toBe('vcalendar');
    expect(checkRecurrence('FREQ=DAILY;BYDAY=XX')).toEqual({
      error: expect.any(String),
    });
  });
});
