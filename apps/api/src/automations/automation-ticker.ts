import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Clock } from '../clock/clock';

/** Something with due times: cron jobs, Pulse. */
export interface Schedulable {
  readonly name: string;
  /** The earliest time something is due, or null when nothing is. */
  nextDueAt(): Date | null;
  /** Starts whatever is due at `now` (without waiting for the runs) and moves its due times on. */
  tick(now: Date): Promise<void>;
}

/** The longest the ticker sleeps, so a wall-clock jump (suspend, a clock fix) is noticed within a minute. */
export const MAX_SLEEP_MS = 60_000;
const TIMEOUT_NAME = 'automations';

/**
 * One timer for every schedule, armed for the earliest due time read from the
 * injectable clock and registered with `@nestjs/schedule`'s registry. Tests move
 * a manual clock and call `tick()`; production wakes on the timer.
 */
@Injectable()
export class AutomationTicker implements OnApplicationShutdown {
  private readonly logger = new Logger(AutomationTicker.name);
  private readonly sources: Schedulable[] = [];
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly registry: SchedulerRegistry,
  ) {}

  register(source: Schedulable): void {
    this.sources.push(source);
  }

  /** Re-reads every due time and sets the timer; call after any schedule change. */
  rearm(): void {
    if (this.stopped) return;
    this.clearTimer();
    const now = this.clock.now().getTime();
    let earliest: number | null = null;
    for (const source of this.sources) {
      const due = source.nextDueAt()?.getTime();
      if (due !== undefined && (earliest === null || due < earliest))
        earliest = due;
    }
    if (earliest === null) return;
    const delay = Math.min(Math.max(earliest - now, 0), MAX_SLEEP_MS);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref();
    this.registry.addTimeout(TIMEOUT_NAME, this.timer);
  }

  /** Fires everything due now. Ticks never overlap: one asked for during a tick runs right after it. */
  async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return this.ticking;
    }
    this.ticking = (async () => {
      do {
        this.again = false;
        const now = this.clock.now();
        for (const source of this.sources) {
          try {
            await source.tick(now);
          } catch (error) {
            this.logger.error(
              `The ${source.name} schedule failed: ${(error as Error).message}`,
            );
          }
        }
      } while (this.again && !this.stopped);
    })();
    try {
      await this.ticking;
    } finally {
      this.ticking = null;
      this.rearm();
    }
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.clearTimer();
  }

  private clearTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.registry.doesExist('timeout', TIMEOUT_NAME))
      this.registry.deleteTimeout(TIMEOUT_NAME);
  }
}
