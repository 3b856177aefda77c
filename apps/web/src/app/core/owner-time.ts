import {
  DestroyRef,
  Injectable,
  Pipe,
  type PipeTransform,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { ApiClient } from './api-client';
import { EventStream } from './event-stream';

/**
 * The console's one clock: every time is shown in the owner's time zone (from the settings), in one format.
 *
 * - `relative` (lists, messages): "just now", "5 min ago", "in 20 min", "14:03" (today), "yesterday 14:03",
 *   "tomorrow 08:00", "Mon 14:03" (within a week), "23 Nov, 14:03", "23 Nov 2025, 14:03" (another year).
 * - `absolute` (schedules, run history, "running since"): "Mon 23 Nov, 14:03", "Mon 23 Nov 2025, 14:03".
 * - `full` (tooltips): "Monday 23 November 2026, 14:03:05 (Europe/Paris)".
 */
export type TimeStyle = 'relative' | 'absolute' | 'full';

interface ZonedParts {
  year: number;
  month: string;
  monthLong: string;
  day: number;
  weekday: string;
  weekdayLong: string;
  hour: string;
  minute: string;
  second: string;
  /** Days since 1970-01-01 of the calendar date in the zone (to compare dates across zones). */
  dayNumber: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone if this browser knows it, else the browser's own. */
function usableZone(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone: usableZone(zone),
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      weekday: 'long',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

function partsIn(date: Date, zone: string): ZonedParts {
  const parts = formatterFor(zone).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    parts.find((p) => p.type === type)?.value ?? '';
  const year = Number(part('year'));
  const monthLong = part('month');
  const day = Number(part('day'));
  const monthIndex = MONTHS.indexOf(monthLong);
  return {
    year,
    month: monthLong.slice(0, 3),
    monthLong,
    day,
    weekday: part('weekday').slice(0, 3),
    weekdayLong: part('weekday'),
    hour: part('hour'),
    minute: part('minute'),
    second: part('second'),
    dayNumber: Math.floor(Date.UTC(year, monthIndex, day) / 86_400_000),
  };
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** A time as the console shows it, in `zone`; "" for a missing or broken date. */
export function formatOwnerTime(
  value: string | number | Date | null | undefined,
  zone: string,
  style: TimeStyle = 'relative',
  now: Date = new Date(),
): string {
  if (value === null || value === undefined || value === '') return '';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const at = partsIn(date, zone);
  const clock = `${at.hour}:${at.minute}`;
  if (style === 'full')
    return `${at.weekdayLong} ${at.day} ${at.monthLong} ${at.year}, ${clock}:${at.second} (${usableZone(zone) ?? 'this browser’s time'})`;

  const today = partsIn(now, zone);
  const sameYear = at.year === today.year;
  const dayMonth = `${at.day} ${at.month}${sameYear ? '' : ` ${at.year}`}`;
  if (style === 'absolute') return `${at.weekday} ${dayMonth}, ${clock}`;

  const seconds = (date.getTime() - now.getTime()) / 1000;
  if (Math.abs(seconds) < 45) return 'just now';
  const minutes = Math.round(Math.abs(seconds) / 60);
  if (minutes < 60)
    return seconds < 0 ? `${minutes} min ago` : `in ${minutes} min`;
  const days = at.dayNumber - today.dayNumber;
  if (days === 0) return clock;
  if (days === -1) return `yesterday ${clock}`;
  if (days === 1) return `tomorrow ${clock}`;
  if (Math.abs(days) < 7) return `${at.weekday} ${clock}`;
  return `${dayMonth}, ${clock}`;
}

/** The browser's zone, the first guess until the settings say otherwise. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** How often relative times ("5 min ago") are brought up to date. */
const TICK_MS = 30_000;

/**
 * The owner's zone (from `GET /api/settings`, reloaded when the settings are saved) and a `now` that ticks,
 * so relative times stay true. The logged-in shell calls `follow()`; until then (and in the setup step) the
 * browser's zone is used.
 */
@Injectable({ providedIn: 'root' })
export class OwnerTime {
  private readonly api = inject(ApiClient);
  private readonly events = inject(EventStream);
  private readonly destroyRef = inject(DestroyRef);
  private started = false;
  private known = false;

  readonly zone = signal(browserTimeZone());
  readonly now = signal(new Date());
  /**
   * The primary model of the same settings, so the chat's model picker can say which model "Default" is
   * without asking again; null until known or when none is set.
   */
  readonly primaryModel = signal<string | null>(null);

  constructor() {
    const timer = setInterval(() => {
      this.now.set(new Date());
      // The first load failed (the server was away): try again now and then.
      if (this.started && !this.known) this.load();
    }, TICK_MS);
    this.destroyRef.onDestroy(() => clearInterval(timer));
  }

  /** Starts following the owner's zone (once). */
  follow(): void {
    if (this.started) return;
    this.started = true;
    this.load();
    this.events
      .on('settings.updated')
      .pipe(takeUntilDestroyed(this.destroyRef))
      .subscribe(() => this.load());
  }

  /** The zone the owner just saved, before the settings event comes back. */
  use(zone: string): void {
    this.zone.set(zone);
    this.known = true;
  }

  /** The primary model the owner just saved, before the settings event comes back. */
  usePrimaryModel(model: string | null | undefined): void {
    this.primaryModel.set(model?.trim() || null);
  }

  /** A time in the owner's zone, in the console's one format. */
  format(
    value: string | number | Date | null | undefined,
    style: TimeStyle = 'relative',
  ): string {
    return formatOwnerTime(value, this.zone(), style, this.now());
  }

  private load(): void {
    this.api.settings().subscribe({
      next: (settings) => {
        this.known = true;
        if (settings.timezone) this.zone.set(settings.timezone);
        this.usePrimaryModel(settings.primaryModel);
      },
      // The server is away: the browser's zone until the next try.
      error: () => (this.known = false),
    });
  }
}

/** `{{ iso | ownerTime }}`, `{{ iso | ownerTime: 'absolute' }}`, `[title]="iso | ownerTime: 'full'"`. */
@Pipe({ name: 'ownerTime', pure: false })
export class OwnerTimePipe implements PipeTransform {
  private readonly clock = inject(OwnerTime);

  transform(
    value: string | number | Date | null | undefined,
    style: TimeStyle = 'relative',
  ): string {
    return this.clock.format(value, style);
  }
}
