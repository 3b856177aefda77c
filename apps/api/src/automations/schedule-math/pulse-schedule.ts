import {
  PULSES_PER_DAY_CHOICES,
  QUIET_HOURS_MAX_RANGES,
} from '@metatronos/shared-types';
import type { PulseSettings, QuietHoursRange } from '@metatronos/shared-types';
import { DateTime, IANAZone } from 'luxon';

/** The part of the Pulse settings that decides when it fires. */
export type PulseSlotSettings = Pick<
  PulseSettings,
  'activeDays' | 'pulsesPerDay' | 'quietHours'
>;

const MINUTES_PER_DAY = 1440;
/** How many local days nextPulseSlot looks at after the one holding `after`. */
const LOOKAHEAD_DAYS = 8;
const DAY_LABELS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const QUIET_RANGE_KEYS = ['start', 'end'];

/**
 * Minutes between two pulses: 1440 / `pulsesPerDay` (30, 60, 120, 240, 720 for the allowed choices).
 * NaN when `pulsesPerDay` is not one of PULSES_PER_DAY_CHOICES (such settings yield no slots).
 */
export function pulseIntervalMinutes(pulsesPerDay: number): number {
  return (PULSES_PER_DAY_CHOICES as readonly number[]).includes(pulsesPerDay)
    ? MINUTES_PER_DAY / pulsesPerDay
    : NaN;
}

/** An `HH:mm` time, `00:00`–`23:59`, two digits each. */
export const HM_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes since midnight of an `HH:mm` time (`00:00`–`23:59`, two digits each), or null. */
export function parseHm(value: string): number | null {
  if (typeof value !== 'string') return null;
  const match = HM_PATTERN.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/**
 * Why `ranges` is not a valid quiet-hours list, or null: an array of at most QUIET_HOURS_MAX_RANGES objects holding
 * exactly `start` and `end`, each an `HH:mm` time, with start ≠ end. A range whose end is before its start
 * crosses midnight.
 */
export function quietHoursProblem(ranges: unknown): string | null {
  if (!Array.isArray(ranges))
    return 'quiet_hours must be a list of ranges like { "start": "22:00", "end": "07:00" }';
  if (ranges.length > QUIET_HOURS_MAX_RANGES) {
    return `quiet_hours holds ${ranges.length} ranges; at most ${QUIET_HOURS_MAX_RANGES} are allowed`;
  }
  for (let i = 0; i < ranges.length; i++) {
    const range: unknown = ranges[i];
    if (typeof range !== 'object' || range === null || Array.isArray(range)) {
      return `quiet_hours[${i}] must be an object like { "start": "22:00", "end": "07:00" }`;
    }
    const record = range as Record<string, unknown>;
    const extra = Object.keys(record).find(
      (key) => !QUIET_RANGE_KEYS.includes(key),
    );
    if (extra !== undefined)
      return `quiet_hours[${i}] has an unknown field "${extra}" (only "start" and "end" are allowed)`;
    const start =
      typeof record['start'] === 'string' ? parseHm(record['start']) : null;
    if (start === null)
      return `quiet_hours[${i}].start must be a time like "22:00"`;
    const end =
      typeof record['end'] === 'string' ? parseHm(record['end']) : null;
    if (end === null)
      return `quiet_hours[${i}].end must be a time like "07:30"`;
    if (start === end) {
      return `quiet_hours[${i}] starts and ends at ${String(record['start'])}; a range needs two different times, e.g. "22:00" to "07:00"`;
    }
  }
  return null;
}

/**
 * True when `minuteOfDay` (0–1439) falls in one of the ranges: start inclusive, end exclusive; a range whose end is
 * before its start crosses midnight (quiet from start to midnight and from midnight to end). Ranges that are not
 * valid (bad times, start = end) are ignored.
 */
export function isQuietMinute(
  minuteOfDay: number,
  ranges: QuietHoursRange[],
): boolean {
  if (!Array.isArray(ranges)) return false;
  return ranges.some((range) => {
    const start = parseHm(range?.start);
    const end = parseHm(range?.end);
    if (start === null || end === null || start === end) return false;
    return start < end
      ? minuteOfDay >= start && minuteOfDay < end
      : minuteOfDay >= start || minuteOfDay < end;
  });
}

/** `zone` when luxon knows it, else UTC. */
function zoneOrUtc(zone: string): string {
  return typeof zone === 'string' && IANAZone.isValidZone(zone) ? zone : 'UTC';
}

/** The start of the local day holding `at`, or null for an invalid date. */
function localDay(at: Date, tz: string): DateTime | null {
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) return null;
  return DateTime.fromJSDate(at, { zone: zoneOrUtc(tz) }).startOf('day');
}

/**
 * The eligible slots of one local calendar day, ascending and without duplicates. A slot's wall time is turned into
 * an instant by luxon: one inside a spring-forward gap moves forward (02:30 → 03:30), a repeated one (fall back)
 * gets one of its two instants. Quiet hours are judged on the slot's nominal wall time.
 */
function eligibleSlots(settings: PulseSlotSettings, day: DateTime): Date[] {
  const interval = pulseIntervalMinutes(settings.pulsesPerDay);
  const activeDays = Array.isArray(settings.activeDays)
    ? settings.activeDays
    : [];
  if (!Number.isFinite(interval) || !activeDays.includes(day.weekday % 7))
    return [];
  const quiet = Array.isArray(settings.quietHours) ? settings.quietHours : [];
  const seen = new Set<number>();
  for (let minute = 0; minute < MINUTES_PER_DAY; minute += interval) {
    if (isQuietMinute(minute, quiet)) continue;
    const instant = DateTime.fromObject(
      {
        year: day.year,
        month: day.month,
        day: day.day,
        hour: Math.floor(minute / 60),
        minute: minute % 60,
      },
      { zone: day.zone },
    );
    if (instant.isValid) seen.add(instant.toMillis());
  }
  return [...seen].sort((a, b) => a - b).map((ms) => new Date(ms));
}

/**
 * The first eligible pulse slot strictly after `after`, in `tz` (UTC when unknown), looking at the local day of
 * `after` and the 8 days that follow; null when none (no active day, or every slot quiet).
 */
export function nextPulseSlot(
  settings: PulseSlotSettings,
  tz: string,
  after: Date,
): Date | null {
  const first = localDay(after, tz);
  if (!first) return null;
  for (let offset = 0; offset <= LOOKAHEAD_DAYS; offset++) {
    const slot = eligibleSlots(settings, first.plus({ days: offset })).find(
      (s) => s.getTime() > after.getTime(),
    );
    if (slot) return slot;
  }
  return null;
}

/** The eligible slot instants of the local day (in `tz`, UTC when unknown) holding `at`, ascending. */
export function pulseSlotsOfDay(
  settings: PulseSlotSettings,
  tz: string,
  at: Date,
): Date[] {
  const day = localDay(at, tz);
  return day ? eligibleSlots(settings, day) : [];
}

/**
 * How many pulses are left today: eligible slots of `now`'s local day at or after `now` and after `lastPulseAt`
 * (a slot already served by a pulse does not count). 0 on an inactive day.
 */
export function remainingPulsesToday(
  settings: PulseSlotSettings,
  tz: string,
  now: Date,
  lastPulseAt: Date | null,
): number {
  const last =
    lastPulseAt instanceof Date && !Number.isNaN(lastPulseAt.getTime())
      ? lastPulseAt.getTime()
      : null;
  return pulseSlotsOfDay(settings, tz, now).filter(
    (slot) =>
      slot.getTime() >= now.getTime() &&
      (last === null || slot.getTime() > last),
  ).length;
}

/** `YYYY-MM-DD` of `at` in `tz` (UTC when unknown): the key of the "pulses today" counter, which resets at local midnight. */
export function localDateKey(at: Date, tz: string): string {
  return localDay(at, tz)?.toFormat('yyyy-MM-dd') ?? '';
}

/** Quiet hours for people and prompts: `22:00–07:00, 12:00–13:00`, or `none`. */
export function formatQuietHours(ranges: QuietHoursRange[]): string {
  if (!Array.isArray(ranges) || ranges.length === 0) return 'none';
  return ranges.map((range) => `${range.start}–${range.end}`).join(', ');
}

/** Active days, Monday first: `Mon, Tue, Wed, Thu, Fri`, `every day` or `none` (values outside 0–6 are ignored). */
export function formatActiveDays(days: number[]): string {
  const valid = new Set(
    (Array.isArray(days) ? days : []).filter(
      (d) => Number.isInteger(d) && d >= 0 && d <= 6,
    ),
  );
  if (valid.size === 7) return 'every day';
  if (valid.size === 0) return 'none';
  return [...valid]
    .sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7))
    .map((d) => DAY_LABELS[d])
    .join(', ');
}
