import type { Server } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/**
 * The one place for start-up work that no answer waits for, so the server listens sooner:
 *
 * - `run`: database work started at boot beside the server (plain index builds, sweeps of old
 *   leftovers; index builds on a fresh database held the first answer ~0.4 s). Work that a
 *   request does need (a unique index before an insert) is awaited by that request itself.
 * - `afterListening`: caches warmed once the HTTP server listens (the chat search index, the
 *   usage rollups), so that they neither delay the start nor compete with it. An app that never
 *   listens (used without HTTP) never runs them: such caches also build on their first use.
 *
 * Specs and benches await `settled()` for a finished start-up. A failure is logged, never thrown.
 */
@Injectable()
export class StartUpWork {
  private readonly logger = new Logger('StartUp');
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

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

  /** Starts `work` (as `run` does) once the HTTP server listens, or now if it already does. */
  afterListening(what: string, work: () => Promise<unknown>): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as
      | Server
      | undefined;
    if (!server) return;
    const start = () => setImmediate(() => this.run(what, work));
    if (server.listening) start();
    else server.once('listening', start);
  }

  /** Resolves once every piece of work started so far has ended (tests, benches). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }
}
