import {
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { DatabaseStatus } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';

const CHECK_INTERVAL_MS = 5000;
/** A check answers with what it knows after this long; a ping still under way goes on. */
const CHECK_ANSWER_MS = 1500;
/**
 * A ping unanswered this long means the database is down. Under load (many turns, jobs and
 * auto-replies writing to the one SQLite file) a ping can wait seconds behind the writes: a
 * slow ping is not a dead database. A ping that fails (connection refused or closed) is down at once.
 */
export const PING_DEADLINE_MS = 15_000;

/**
 * Knows whether the database answers. The embedded server's exit flips it to
 * `down` at once; a periodic ping catches an external server going away and
 * coming back. Requests consult it so they fail fast with 503 instead of hanging.
 */
@Injectable()
export class DatabaseHealthService
  implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown
{
  private readonly logger = new Logger('Database');
  private current: DatabaseStatus = 'up';
  private timer: NodeJS.Timeout | undefined;
  /** The ping under way: checks meanwhile wait for it rather than stacking pings on a busy database. */
  private pinging: Promise<void> | null = null;
  private stopping = false;

  constructor(
    @Inject(DATABASE_RUNTIME) private readonly runtime: DatabaseRuntime,
    @InjectConnection() private readonly connection: Connection,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.runtime.embedded?.onUnexpectedExit((exit) => {
      const how = exit.signal
        ? `signal ${exit.signal}`
        : `exit code ${exit.code}`;
      const why = exit.lastError ? `: ${exit.lastError}` : '';
      this.setStatus(
        'down',
        `the embedded database process exited (${how})${why}`,
      );
    });
    this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stopping: no more pings, and the answer of one under way (the connection closing under it) is not news. */
  onModuleDestroy(): void {
    this.stopping = true;
    clearInterval(this.timer);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  get status(): DatabaseStatus {
    return this.current;
  }

  /**
   * Pings (or joins the ping under way) and returns the status: fresh when the ping
   * answers within CHECK_ANSWER_MS, otherwise the one known so far.
   */
  async check(): Promise<DatabaseStatus> {
    if (this.runtime.embedded && !this.runtime.embedded.running) {
      this.setStatus('down', 'the embedded database process is not running');
      return this.current;
    }
    this.pinging ??= this.ping().finally(() => (this.pinging = null));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.pinging,
      new Promise<void>((done) => (timer = setTimeout(done, CHECK_ANSWER_MS))),
    ]);
    clearTimeout(timer);
    return this.current;
  }

  private async ping(): Promise<void> {
    try {
      const db = this.connection.db;
      if (!db) throw new Error('not connected');
      await withTimeout(db.admin().ping(), PING_DEADLINE_MS);
      this.setStatus('up');
    } catch (error) {
      if (this.stopping) return;
      this.setStatus('down', `ping failed: ${(error as Error).message}`);
    }
  }

  private setStatus(status: DatabaseStatus, reason?: string): void {
    if (status === this.current) return;
    this.current = status;
    if (status === 'down') this.logger.error(`Database is down: ${reason}`);
    else this.logger.log('Database is up again');
    this.events.emit('database.status', {
      status,
      reason,
      at: this.clock.now().toISOString(),
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer within ${ms} ms`)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
