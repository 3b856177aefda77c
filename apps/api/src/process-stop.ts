import type { Server } from 'node:http';

export interface StopTimings {
  /** Past this, the process exits (code 1) without waiting for the rest: a stop ends within 5 s. */
  hardExitMs: number;
  /** Connections still open after this (an upload, a download, a stream that did not end) are cut. */
  connectionGraceMs: number;
  /** The embedded database gets SIGTERM, then SIGKILL after this. */
  databaseGraceMs: number;
}

export const STOP_TIMINGS: StopTimings = {
  hardExitMs: 4500,
  connectionGraceMs: 2000,
  databaseGraceMs: 2000,
};

/** What a stop acts on; each part may not exist yet when a signal comes during start-up. */
export interface StopTargets {
  server(): Server | undefined;
  /** Closes the Nest app: its hooks stop replies and jobs and end the event streams (AppEventBus). */
  closeApp(): Promise<void>;
  stopDatabase(graceMs: number): Promise<void>;
  releaseLock(): void;
  exit(code: number): void;
  log(message: string): void;
  error(message: string): void;
}

/**
 * Stops the process in order, and within `hardExitMs` whatever hangs: no new connections, the app
 * closed (event streams end with their last event, replies and jobs are stored), each connection
 * closed once its answer ended, the rest cut after the grace period, the database stopped, the
 * data-dir lock released. A second stop request exits at once.
 */
export class ProcessStop {
  private stopping: Promise<void> | null = null;
  private exited = false;
  /** The orderly stop's own timers, cleared when it ends either way. */
  private readonly timers: Array<ReturnType<typeof setTimeout>> = [];

  constructor(
    private readonly targets: StopTargets,
    private readonly timings: StopTimings = STOP_TIMINGS,
  ) {}

  get started(): boolean {
    return this.stopping !== null;
  }

  /** Ends the process now: the lock is released and the database told to stop (not awaited). */
  exitNow(code: number): void {
    if (this.exited) return;
    this.exited = true;
    this.clearTimers();
    void this.targets.stopDatabase(0).catch(() => undefined);
    this.targets.releaseLock();
    this.targets.exit(code);
  }

  private clearTimers(): void {
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
  }

  /** A signal: the first one stops in order, a second one exits at once. */
  onSignal(signal: string): void {
    if (this.stopping) {
      this.targets.error(`${signal} received again, exiting now`);
      this.exitNow(1);
      return;
    }
    this.targets.log(`${signal} received, shutting down`);
    void this.stop(0);
  }

  /** Stops in order and exits with `exitCode`; a stop already under way is the one that ends the process. */
  stop(exitCode: number): Promise<void> {
    this.stopping ??= this.run(exitCode);
    return this.stopping;
  }

  private async run(exitCode: number): Promise<void> {
    const { hardExitMs, connectionGraceMs, databaseGraceMs } = this.timings;
    const guard = setTimeout(() => {
      this.targets.error(
        `Still stopping after ${hardExitMs / 1000} s: exiting without waiting for the rest`,
      );
      this.exitNow(1);
    }, hardExitMs);
    guard.unref();
    const server = this.targets.server();
    server?.close();
    // A connection whose answer just ended (an event stream, a reply) stays open as keep-alive: close it then.
    server?.closeIdleConnections();
    // Not unref'd: while the app closes they keep the process up until the guard's exit at the latest.
    const idle = setInterval(() => server?.closeIdleConnections(), 50);
    const cut = setTimeout(
      () => server?.closeAllConnections(),
      connectionGraceMs,
    );
    this.timers.push(guard, idle, cut);
    // The app (and its database connections) closes before the database stops under it.
    await this.targets
      .closeApp()
      .catch((error: Error) =>
        this.targets.error(`Error while closing: ${error.message}`),
      );
    clearTimeout(cut);
    clearInterval(idle);
    await this.targets
      .stopDatabase(databaseGraceMs)
      .catch((error: Error) =>
        this.targets.error(
          `Error while stopping the database: ${error.message}`,
        ),
      );
    if (this.exited) return;
    this.clearTimers();
    this.exited = true;
    this.targets.releaseLock();
    this.targets.exit(exitCode);
  }
}
