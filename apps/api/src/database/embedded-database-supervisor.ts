import {
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { Clock } from '../clock/clock';
import { DatabaseHealthService } from './database-health.service';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';

export const DEFAULT_RESTART_DELAYS_MS = [1000, 2000, 5000, 10000, 30000];
/** A server that stayed up this long counts as healthy again: its next crash starts the backoff afresh. */
const STABLE_AFTER_MS = 60_000;

/**
 * Brings the embedded database back when its process dies: restarts it on the
 * same address (socket or port) and data after a growing delay, then re-checks
 * health (which announces `database.status` up). After the last delay it gives up and says so.
 */
@Injectable()
export class EmbeddedDatabaseSupervisor
  implements OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('Database');
  private readonly delays: number[];
  private attempt = 0;
  private lastRestartAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private shuttingDown = false;

  constructor(
    @Inject(DATABASE_RUNTIME) private readonly runtime: DatabaseRuntime,
    private readonly health: DatabaseHealthService,
    private readonly clock: Clock,
  ) {
    this.delays = runtime.restartDelaysMs ?? DEFAULT_RESTART_DELAYS_MS;
  }

  onModuleInit(): void {
    this.runtime.embedded?.onUnexpectedExit(() => {
      if (this.clock.now().getTime() - this.lastRestartAt >= STABLE_AFTER_MS)
        this.attempt = 0;
      this.scheduleRestart();
    });
  }

  onApplicationShutdown(): void {
    this.shuttingDown = true;
    clearTimeout(this.timer);
  }

  private scheduleRestart(): void {
    if (this.shuttingDown) return;
    if (this.attempt >= this.delays.length) {
      this.logger.error(
        `The embedded database keeps failing (${this.attempt} restarts); giving up. Check the data dir and restart MetatronOS.`,
      );
      return;
    }
    const delay = this.delays[this.attempt++];
    this.logger.warn(
      `Restarting the embedded database in ${delay} ms (attempt ${this.attempt} of ${this.delays.length})`,
    );
    this.timer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    const embedded = this.runtime.embedded;
    if (!embedded || this.shuttingDown) return;
    try {
      await embedded.restart();
    } catch (error) {
      this.logger.error(
        `Restarting the embedded database failed: ${(error as Error).message}`,
      );
      this.scheduleRestart();
      return;
    }
    this.lastRestartAt = this.clock.now().getTime();
    this.logger.log('The embedded database was restarted');
    // The driver rediscovers the server within a moment; health flips back up on the first good ping.
    for (let i = 0; i < 10 && !this.shuttingDown; i++) {
      if ((await this.health.check()) === 'up') return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
