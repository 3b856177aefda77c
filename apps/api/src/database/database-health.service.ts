import {
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { DatabaseStatus } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';

const CHECK_INTERVAL_MS = 5000;
const PING_TIMEOUT_MS = 1500;

/**
 * Knows whether the database answers. The embedded server's exit flips it to
 * `down` at once; a periodic ping catches an external server going away and
 * coming back. Requests consult it so they fail fast with 503 instead of hanging.
 */
@Injectable()
export class DatabaseHealthService
  implements OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('Database');
  private current: DatabaseStatus = 'up';
  private timer: NodeJS.Timeout | undefined;

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

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  get status(): DatabaseStatus {
    return this.current;
  }

  /** Pings now and returns the fresh status. */
  async check(): Promise<DatabaseStatus> {
    if (this.runtime.embedded && !this.runtime.embedded.running) {
      this.setStatus('down', 'the embedded database process is not running');
      return this.current;
    }
    try {
      const db = this.connection.db;
      if (!db) throw new Error('not connected');
      await withTimeout(db.admin().ping(), PING_TIMEOUT_MS);
      this.setStatus('up');
    } catch (error) {
      this.setStatus('down', `ping failed: ${(error as Error).message}`);
    }
    return this.current;
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
