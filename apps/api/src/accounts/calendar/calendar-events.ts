import { ICAL } from './ical';
import type { DateTime } from 'luxon';
import {
  icalTimeFields,
  instantOf,
  isUtcZone,
  vtimezoneFor,
} from './calendar-time';

/**
 * iCalendar in and out of the calendar tool, through ical.js: events read as
 * occurrences in a range (recurring series expanded), and events written from
 * the owner-zone fields the model gave.
 */

/** What an event says, in the owner's zone. All-day: dates at the owner's midnight, `end` exclusive (as DTEND). */
export interface CalendarEventFields {
  title: string;
  allDay: boolean;
  start: DateTime;
  end: DateTime;
  location: string | null;
  description: string | null;
  /** An RRULE value ("FREQ=WEEKLY;BYDAY=MO"), null for a single event. */
  recurrence: string | null;
}

/** One occurrence in a range: a single event, or one instance of a series. */
export interface CalendarOccurrence extends CalendarEventFields {
  uid: string;
  /** True for an instance of a recurring series (its id is still the series' UID). */
  inSeries: boolean;
}

export interface TimeRange {
  start: DateTime;
  end: DateTime;
}

/** A runaway rule (every minute since 1970) stops here instead of blocking the turn. */
const MAX_EXPANSION_STEPS = 50_000;

const RRULE_FREQUENCIES = new Set([
  'SECONDLY',
  'MINUTELY',
  'HOURLY',
  'DAILY',
  'WEEKLY',
  'MONTHLY',
  'YEARLY',
]);

/**
 * An RRULE value checked by ical.js; returns it normalized, or the error text.
 * ical.js refuses bad parts (BYDAY=XX) but takes a rule without FREQ, hence the check.
 */
export function checkRecurrence(rule: string): string | { error: string } {
  const text = rule.trim().replace(/^RRULE:/i, '');
  try {
    const recur = ICAL.Recur.fromString(text);
    if (!recur.freq || !RRULE_FREQUENCIES.has(recur.freq))
      return {
        error: `recurrence '${rule}' needs FREQ (DAILY, WEEKLY, MONTHLY, YEARLY…), e.g. FREQ=WEEKLY;BYDAY=MO.`,
      };
    return recur.toString();
  } catch (error) {
    return {
      error: `recurrence '${rule}' is not a valid RRULE (${(error as Error).message}), e.g. FREQ=WEEKLY;BYDAY=MO.`,
    };
  }
}

export interface ParsedCalendarObject {
  root: ICAL.Component;
  vtimezones: Map<string, ICAL.Timezone>;
  /** The VEVENT without RECURRENCE-ID for each UID (absent for lone overridden instances). */
  masters: Map<string, ICAL.Component>;
  /** The overridden instances (with RECURRENCE-ID) for each UID. */
  overrides: Map<string, ICAL.Component[]>;
}

export function parseCalendarObject(text: string): ParsedCalendarObject {
  const root = new ICAL.Component(ICAL.parse(text));
  const vtimezones = new Map<string, ICAL.Timezone>();
  for (const c of root.getAllSubcomponents('vtimezone')) {
    const tzid = c.getFirstPropertyValue('tzid');
    if (typeof tzid === 'string')
      vtimezones.set(tzid, new ICAL.Timezone({ component: c, tzid }));
  }
  const masters = new Map<string, ICAL.Component>();
  const overrides = new Map<string, ICAL.Component[]>();
  for (const vevent of root.getAllSubcomponents('vevent')) {
    const uid = String(vevent.getFirstPropertyValue('uid') ?? '');
    if (!uid) continue;
    if (vevent.hasProperty('recurrence-id'))
      overrides.set(uid, [...(overrides.get(uid) ?? []), vevent]);
    else masters.set(uid, vevent);
  }
  return { root, vtimezones, masters, overrides };
}

/** The occurrences of every event in the object that overlap `range`, earliest first. */
export function occurrencesIn(
  text: string,
  range: TimeRange,
  ownerZone: string,
): CalendarOccurrence[] {
  const parsed = parseCalendarObject(text);
  const found: CalendarOccurrence[] = [];
  const uids = new Set([...parsed.masters.keys(), ...parsed.overrides.keys()]);
  for (const uid of uids) {
    const master = parsed.masters.get(uid);
    const overrides = (parsed.overrides.get(uid) ?? []).filter(
      (o) => String(o.getFirstPropertyValue('status') ?? '') !== 'CANCELLED',
    );
    if (!master) {
      // Lone instances (an invitation to one date of someone else's series).
      for (const o of overrides) {
        const f = eventFields(o, ownerZone, parsed.vtimezones);
        if (overlaps(f, range))
          found.push({ ...f, uid, inSeries: true, recurrence: null });
      }
      continue;
    }
    const fields = eventFields(master, ownerZone, parsed.vtimezones);
    if (!fields.recurrence && !master.hasProperty('rdate')) {
      if (overlaps(fields, range))
        found.push({ ...fields, uid, inSeries: false });
      continue;
    }
    found.push(
      ...seriesOccurrences(uid, master, fields, parsed, range, ownerZone),
    );
  }
  return found.sort((a, b) => a.start.toMillis() - b.start.toMillis());
}

function seriesOccurrences(
  uid: string,
  master: ICAL.Component,
  fields: CalendarEventFields,
  parsed: ParsedCalendarObject,
  range: TimeRange,
  ownerZone: string,
): CalendarOccurrence[] {
  const tzid = tzidOf(master, 'dtstart');
  const at = (time: ICAL.Time, zone: string | null) =>
    instantOf(time, zone, ownerZone, parsed.vtimezones).toMillis();
  // EXDATE and RECURRENCE-ID are matched by instant, not by ical.js: it compares
  // wall-clock times and misses an EXDATE in UTC against a TZID series.
  const excluded = new Set<number>();
  for (const prop of master.getAllProperties('exdate'))
    for (const value of prop.getValues())
      if (value instanceof ICAL.Time)
        excluded.add(at(value, stringParameter(prop, 'tzid') ?? tzid));
  const overrides = parsed.overrides.get(uid) ?? [];
  const overridden = new Set<number>();
  for (const o of overrides) {
    const prop = o.getFirstProperty('recurrence-id');
    const value = prop?.getFirstValue();
    if (prop && value instanceof ICAL.Time)
      overridden.add(at(value, stringParameter(prop, 'tzid') ?? tzid));
  }
  const length = fields.end.diff(fields.start);
  const occurrences: CalendarOccurrence[] = [];
  const iterator = new ICAL.Event(master).iterator();
  for (let step = 0; step < MAX_EXPANSION_STEPS; step++) {
    const next = iterator.next();
    if (!next) break;
    const start = instantOf(next, tzid, ownerZone, parsed.vtimezones).setZone(
      ownerZone,
    );
    if (start >= range.end) break;
    const key = start.toMillis();
    if (excluded.has(key) || overridden.has(key)) continue;
    const end = fields.allDay
      ? start.plus({ days: Math.round(length.as('days')) })
      : start.plus(length);
    if (end > range.start)
      occurrences.push({ ...fields, start, end, uid, inSeries: true });
  }
  for (const o of overrides) {
    if (String(o.getFirstPropertyValue('status') ?? '') === 'CANCELLED')
      continue;
    const prop = o.getFirstProperty('recurrence-id');
    const value = prop?.getFirstValue();
    if (
      prop &&
      value instanceof ICAL.Time &&
      excluded.has(at(value, stringParameter(prop, 'tzid') ?? tzid))
    )
      continue;
    const f = eventFields(o, ownerZone, parsed.vtimezones);
    if (overlaps(f, range))
      occurrences.push({
        ...f,
        recurrence: fields.recurrence,
        uid,
        inSeries: true,
      });
  }
  return occurrences;
}

function overlaps(fields: CalendarEventFields, range: TimeRange): boolean {
  return fields.start < range.end && fields.end > range.start;
}

/** A VEVENT's fields in the owner's zone. */
export function eventFields(
  vevent: ICAL.Component,
  ownerZone: string,
  vtimezones: ReadonlyMap<string, ICAL.Timezone>,
): CalendarEventFields {
  const event = new ICAL.Event(vevent);
  const startTime = event.startDate;
  const allDay = startTime.isDate;
  const start = instantOf(
    startTime,
    tzidOf(vevent, 'dtstart'),
    ownerZone,
    vtimezones,
  ).setZone(ownerZone);
  let end: DateTime;
  if (vevent.hasProperty('dtend') || vevent.hasProperty('duration')) {
    // ical.js derives endDate from DURATION when there is no DTEND.
    end = vevent.hasProperty('dtend')
      ? instantOf(
          event.endDate,
          tzidOf(vevent, 'dtend'),
          ownerZone,
          vtimezones,
        ).setZone(ownerZone)
      : start.plus({ seconds: event.duration.toSeconds() });
  } else end = allDay ? start.plus({ days: 1 }) : start;
  if (end < start) end = start;
  const rrule = vevent.getFirstPropertyValue('rrule');
  return {
    title: String(vevent.getFirstPropertyValue('summary') ?? ''),
    allDay,
    start,
    end,
    location: optionalText(vevent.getFirstPropertyValue('location')),
    description: optionalText(vevent.getFirstPropertyValue('description')),
    recurrence: rrule instanceof ICAL.Recur ? rrule.toString() : null,
  };
}

/** A new VCALENDAR holding one event. */
export function newCalendarObject(
  uid: string,
  fields: CalendarEventFields,
  ownerZone: string,
  stamp: DateTime,
): string {
  const root = new ICAL.Component('vcalendar');
  root.addPropertyWithValue('prodid', '-//MetatronOS//Calendar//EN');
  root.addPropertyWithValue('version', '2.0');
  root.addPropertyWithValue('calscale', 'GREGORIAN');
  const vevent = new ICAL.Component('vevent');
  vevent.addPropertyWithValue('uid', uid);
  root.addSubcomponent(vevent);
  writeEventFields(root, vevent, fields, ownerZone, stamp);
  vevent.addPropertyWithValue('created', utcTime(stamp));
  return root.toString();
}

/**
 * Writes the fields into an existing VEVENT (other properties such as
 * EXDATE, attendees and alarms stay), bumping SEQUENCE and the stamps.
 */
export function writeEventFields(
  root: ICAL.Component,
  vevent: ICAL.Component,
  fields: CalendarEventFields,
  ownerZone: string,
  stamp: DateTime,
): void {
  setText(vevent, 'summary', fields.title);
  setText(vevent, 'location', fields.location);
  setText(vevent, 'description', fields.description);
  vevent.removeAllProperties('duration');
  setTime(vevent, 'dtstart', fields.start, fields.allDay, ownerZone);
  setTime(vevent, 'dtend', fields.end, fields.allDay, ownerZone);
  vevent.removeAllProperties('rrule');
  if (fields.recurrence)
    vevent.addPropertyWithValue(
      'rrule',
      ICAL.Recur.fromString(fields.recurrence),
    );
  vevent.updatePropertyWithValue('dtstamp', utcTime(stamp));
  vevent.updatePropertyWithValue('last-modified', utcTime(stamp));
  const sequence = Number(vevent.getFirstPropertyValue('sequence') ?? -1);
  vevent.updatePropertyWithValue(
    'sequence',
    Number.isFinite(sequence) ? sequence + 1 : 0,
  );
  if (
    !fields.allDay &&
    !isUtcZone(ownerZone) &&
    !root
      .getAllSubcomponents('vtimezone')
      .some((c) => c.getFirstPropertyValue('tzid') === ownerZone)
  )
    root.addSubcomponent(vtimezoneFor(ownerZone, fields.start.year));
}

function setText(
  vevent: ICAL.Component,
  name: string,
  value: string | null,
): void {
  vevent.removeAllProperties(name);
  if (value !== null && value !== '') vevent.addPropertyWithValue(name, value);
}

function setTime(
  vevent: ICAL.Component,
  name: 'dtstart' | 'dtend',
  time: DateTime,
  allDay: boolean,
  ownerZone: string,
): void {
  vevent.removeAllProperties(name);
  const prop = new ICAL.Property(name);
  if (allDay) {
    prop.resetType('date');
    prop.setValue(ICAL.Time.fromData(icalTimeFields(time, true)));
  } else if (isUtcZone(ownerZone)) {
    prop.setValue(utcTime(time));
  } else {
    prop.setValue(
      ICAL.Time.fromData(icalTimeFields(time.setZone(ownerZone), false)),
    );
    prop.setParameter('tzid', ownerZone);
  }
  vevent.addProperty(prop);
}

function utcTime(time: DateTime): ICAL.Time {
  return ICAL.Time.fromData(
    icalTimeFields(time.toUTC(), false),
    ICAL.Timezone.utcTimezone,
  );
}

function tzidOf(vevent: ICAL.Component, name: string): string | null {
  const prop = vevent.getFirstProperty(name);
  return prop ? stringParameter(prop, 'tzid') : null;
}

function stringParameter(prop: ICAL.Property, name: string): string | null {
  const value = prop.getParameter(name);
  return typeof value === 'string' && value ? value : null;
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
