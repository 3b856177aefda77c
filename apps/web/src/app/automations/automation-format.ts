import type {
  CronRunView,
  PulsesPerDay,
  QuietHoursRange,
  RunOutcome,
  RunTrigger,
} from '@metatronos/shared-types';
import { formatOwnerTime } from '../core/owner-time';

/**
 * "Mon 23 Nov, 08:00" in the owner's time zone (the year too when it is not this one); "" for a missing or
 * broken date. The console's one format (core/owner-time), absolute as schedules need.
 */
export function formatInZone(
  iso: string | null | undefined,
  timeZone: string,
  now: Date = new Date(),
): string {
  return formatOwnerTime(iso, timeZone, 'absolute', now);
}

/** "850 ms", "12 s", "2 min 5 s", "1 h 3 min"; "" when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0)
    return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60)
    return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

/** "30 min", "1 h", "12 h". */
export function formatInterval(minutes: number): string {
  if (minutes < 60 || minutes % 60) return `${minutes} min`;
  return `${minutes / 60} h`;
}

export const OUTCOME_LABELS: Record<RunOutcome, string> = {
  running: 'Running',
  success: 'Success',
  error: 'Error',
  skipped: 'Skipped',
  missed: 'Missed',
};

export const TRIGGER_LABELS: Record<RunTrigger, string> = {
  schedule: 'Scheduled',
  manual: 'Manual',
  'catch-up': 'Catch-up',
  mail: 'New mail',
};

/** Why a run ended as it did, in words: the error, or what `reason` means for a skipped/missed run. */
export function runDetail(run: CronRunView): string {
  if (run.error) return run.error;
  if (!run.reason) return '';
  if (run.outcome === 'skipped' && run.reason === 'busy')
    return 'Skipped: the previous run was still going.';
  if (run.outcome === 'missed') {
    const count = Number(run.reason);
    if (Number.isInteger(count) && count > 0) {
      return `${count} ${count === 1 ? 'run was' : 'runs were'} missed while MetatronOS was off.`;
    }
  }
  return run.reason;
}

/** "every 30 min" … "every 12 h" for the pulses-per-day choices. */
export function pulsesPerDayLabel(perDay: PulsesPerDay | number): string {
  const minutes = (24 * 60) / perDay;
  if (minutes === 60) return 'every hour';
  return `every ${formatInterval(minutes)}`;
}

export const WEEKDAYS = [
  { day: 0, short: 'Sun', long: 'Sunday' },
  { day: 1, short: 'Mon', long: 'Monday' },
  { day: 2, short: 'Tue', long: 'Tuesday' },
  { day: 3, short: 'Wed', long: 'Wednesday' },
  { day: 4, short: 'Thu', long: 'Thursday' },
  { day: 5, short: 'Fri', long: 'Friday' },
  { day: 6, short: 'Sat', long: 'Saturday' },
] as const;

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

/** A quiet-hours range whose end is not after its start runs past midnight (22:00–07:00). */
export function crossesMidnight(range: QuietHoursRange): boolean {
  return (
    TIME.test(range.start) && TIME.test(range.end) && range.end < range.start
  );
}

/** What is wrong with one quiet-hours range, or null. */
export function quietHoursError(range: QuietHoursRange): string | null {
  if (!TIME.test(range.start) || !TIME.test(range.end))
    return 'Enter a start and an end time.';
  if (range.start === range.end) return 'Start and end must differ.';
  return null;
}
