import { ICAL } from './ical';
import { DateTime, IANAZone } from 'luxon';

/**
 * Times between the model, the owner's zone and iCalendar. The model speaks in
 * the owner's zone (a time without an offset means that zone); the server gets
 * TZID times with a VTIMEZONE, so a weekly 10:00 stays at 10:00 across DST.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export function isDateOnly(text: string): boolean {
  return DATE_ONLY.test(text.trim());
}

/**
 * A date-time from the model: with an offset or `Z` it is that instant; without
 * one it is wall-clock time in `zone`. A string is the error for the field.
 */
export function parseOwnerDateTime(
  text: string,
  zone: string,
  field: string,
): DateTime | string {
  const parsed = DateTime.fromISO(text.trim(), { zone, setZone: true });
  if (!parsed.isValid)
    return `${field} '${text}' is not a date-time like 2026-12-01T10:00 (owner's time zone) or 2026-12-01T10:00+01:00.`;
  return parsed.setZone(zone);
}

/** A calendar date (all-day events): YYYY-MM-DD. A string is the error for the field. */
export function parseDate(text: string, field: string): DateTime | string {
  const parsed = isDateOnly(text)
    ? DateTime.fromISO(text.trim(), { zone: 'utc' })
    : null;
  if (!parsed?.isValid)
    return `${field} '${text}' is not a date like 2026-12-01 (all_day events take dates).`;
  return parsed;
}

/** ISO with the owner's offset, seconds kept, no milliseconds: 2026-12-01T10:00:00+01:00. */
export function formatOwnerDateTime(instant: DateTime, zone: string): string {
  return instant.setZone(zone).toISO({ suppressMilliseconds: true }) as string;
}

export function isUtcZone(zone: string): boolean {
  return /^(utc|etc\/utc|etc\/gmt|gmt|z)$/i.test(zone);
}

/** ical.js wall-clock fields of a luxon time (as seen in its own zone). */
export function icalTimeFields(
  time: DateTime,
  isDate: boolean,
): {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  isDate: boolean;
} {
  return {
    year: time.year,
    month: time.month,
    day: time.day,
    hour: isDate ? 0 : time.hour,
    minute: isDate ? 0 : time.minute,
    second: isDate ? 0 : time.second,
    isDate,
  };
}

/**
 * The instant an iCalendar time stands for. `tzid` is the property's TZID (the
 * recurrence iterator drops it, so the caller passes the series' one). IANA
 * names are resolved by luxon (Intl's tz database); other names through the
 * object's own VTIMEZONE; floating times are the owner's zone.
 */
export function instantOf(
  time: ICAL.Time,
  tzid: string | null,
  ownerZone: string,
  vtimezones: ReadonlyMap<string, ICAL.Timezone>,
): DateTime {
  const fields = {
    year: time.year,
    month: time.month,
    day: time.day,
    hour: time.isDate ? 0 : time.hour,
    minute: time.isDate ? 0 : time.minute,
    second: time.isDate ? 0 : time.second,
  };
  if (time.isDate) return DateTime.fromObject(fields, { zone: ownerZone });
  if (time.zone === ICAL.Timezone.utcTimezone || time.zone?.tzid === 'UTC')
    return DateTime.fromObject(fields, { zone: 'utc' });
  if (tzid) {
    if (IANAZone.isValidZone(tzid))
      return DateTime.fromObject(fields, { zone: tzid });
    const vtimezone = vtimezones.get(tzid);
    if (vtimezone)
      return DateTime.fromSeconds(
        ICAL.Time.fromData(fields, vtimezone).toUnixTime(),
      );
  }
  return DateTime.fromObject(fields, { zone: ownerZone });
}

/**
 * A VTIMEZONE for an IANA zone, generated from luxon's offsets for `year`:
 * each offset change becomes a STANDARD/DAYLIGHT part with a yearly
 * "nth weekday of the month" rule (how DST rules are written the world over).
 * RFC 5545 wants one beside every TZID; readers that know the zone ignore it.
 */
export function vtimezoneFor(zone: string, year: number): ICAL.Component {
  const component = new ICAL.Component('vtimezone');
  component.addPropertyWithValue('tzid', zone);
  const transitions = offsetTransitions(zone, year);
  if (transitions.length === 0) {
    const offset = DateTime.fromObject(
      { year, month: 1, day: 1 },
      { zone },
    ).offset;
    const part = new ICAL.Component('standard');
    part.addPropertyWithValue(
      'dtstart',
      ICAL.Time.fromData({ year: 1970, month: 1, day: 1, hour: 0 }),
    );
    part.addPropertyWithValue('tzoffsetfrom', utcOffset(offset));
    part.addPropertyWithValue('tzoffsetto', utcOffset(offset));
    component.addSubcomponent(part);
    return component;
  }
  for (const t of transitions) {
    const part = new ICAL.Component(t.to > t.from ? 'daylight' : 'standard');
    // DTSTART is the onset in the local time before the change.
    const onset = t.at.toUTC().plus({ minutes: t.from });
    const daysInMonth = onset.daysInMonth ?? 31;
    const ordinal = onset.day + 7 > daysInMonth ? -1 : Math.ceil(onset.day / 7);
    const weekday = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'][
      onset.weekday - 1
    ];
    // The rule starts in 1970 so that times before this year's change resolve too.
    const first = nthWeekday(1970, onset.month, ordinal, onset.weekday);
    part.addPropertyWithValue(
      'dtstart',
      ICAL.Time.fromData({
        year: 1970,
        month: onset.month,
        day: first.day,
        hour: onset.hour,
        minute: onset.minute,
        second: 0,
      }),
    );
    part.addPropertyWithValue(
      'rrule',
      ICAL.Recur.fromString(
        `FREQ=YEARLY;BYMONTH=${onset.month};BYDAY=${ordinal}${weekday}`,
      ),
    );
    part.addPropertyWithValue('tzoffsetfrom', utcOffset(t.from));
    part.addPropertyWithValue('tzoffsetto', utcOffset(t.to));
    component.addSubcomponent(part);
  }
  return component;
}

/** The `ordinal`th (-1: last) `weekday` (1 = Monday) of a month. */
function nthWeekday(
  year: number,
  month: number,
  ordinal: number,
  weekday: number,
): DateTime {
  if (ordinal < 0) {
    const last = DateTime.fromObject({ year, month, day: 1 }, { zone: 'utc' })
      .endOf('month')
      .startOf('day');
    return last.minus({ days: (last.weekday - weekday + 7) % 7 });
  }
  const first = DateTime.fromObject({ year, month, day: 1 }, { zone: 'utc' });
  return first.plus({
    days: ((weekday - first.weekday + 7) % 7) + 7 * (ordinal - 1),
  });
}

function utcOffset(minutes: number): ICAL.UtcOffset {
  const sign = minutes < 0 ? -1 : 1;
  const abs = Math.abs(minutes);
  return new ICAL.UtcOffset({
    hours: Math.floor(abs / 60),
    minutes: abs % 60,
    factor: sign,
  });
}

interface OffsetTransition {
  /** The first instant with the new offset. */
  at: DateTime;
  from: number;
  to: number;
}

/** The instants in `year` where `zone`'s UTC offset changes (minute precision). */
function offsetTransitions(zone: string, year: number): OffsetTransition[] {
  const found: OffsetTransition[] = [];
  let day = DateTime.fromObject({ year, month: 1, day: 1 }, { zone: 'utc' });
  const end = day.plus({ years: 1 });
  let before = day.setZone(zone).offset;
  while (day < end) {
    const next = day.plus({ days: 1 });
    const after = next.setZone(zone).offset;
    if (after !== before) {
      // Narrow the day down to the minute of the change.
      let low = day.toMillis();
      let high = next.toMillis();
      while (high - low > 60_000) {
        const mid =
          low + Math.max(1, Math.floor((high - low) / 120_000)) * 60_000;
        if (DateTime.fromMillis(mid, { zone }).offset === before) low = mid;
        else high = mid;
      }
      found.push({
        at: DateTime.fromMillis(high, { zone: 'utc' }),
        from: before,
        to: after,
      });
      before = after;
    }
    day = next;
  }
  return found;
}
