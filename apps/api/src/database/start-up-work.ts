import { Injectable, Logger } from '@nestjs/common';

/**
 * Database work at start that no answer depends on (plain index builds, sweeps of
 * old leftovers): it runs beside the server instead of before it listens (index
 * builds on a fresh database held the first answer ~0.4 s). Work that a request
 * does need (a unique index before an insert) is awaited by that request itself.
 */
@Injectable()
export class StartUpWork {
  private readonly logger = new Logger('StartUp');
  private readonly running = new Set<Promise<void>>();

  /** Starts `work` now without holding start-up; a failure is logged with `what` ("create the chat indexes"). */
  run(what: string, work: () => Promise<unknown>): void {
    const done = Promise.resolve()
      .then(work)
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn(
            `Could not ${what}: ${error instanceof Error ? error.message : String(error)}`,
          ),
      )
      .finally(() => this.running.delete(done));
    this.running.add(done);
  }

  /** Resolves once every piece of work started so far has ended (tests, benches). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }
}
