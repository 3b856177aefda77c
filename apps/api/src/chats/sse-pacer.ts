/**
 * When a reply's Server-Sent Events leave. Events that come in one turn of the event loop (the
 * deltas of one network read of the model's stream) go out in one write, after the promise
 * continuations of that read (a tick), not after the rest of the loop's I/O: with many streams at
 * once, a reply's first words leave as soon as they are parsed. Once the first words are out, a
 * write leaves at least `SSE_FRAME_MS` after the previous one: a console cannot draw text faster,
 * and a model that streams its pieces back to back (a fast provider, a short answer) cost a socket
 * write each, a tenth of a turn's CPU (stop 42). The first words are never held back.
 */
export const SSE_FRAME_MS = 16;

/** Where the events go: the response, as far as the pacer needs it. */
export interface SseOutput {
  write(text: string): void;
  /** Sends the headers when no event is ready yet. */
  flushHeaders(): void;
  readonly headersSent: boolean;
  /** The response ended or the client went away: nothing more is written. */
  readonly closed: boolean;
}

/** The pacer's time: the process's by default, a fake one in its spec. */
export interface PacerClock {
  now(): number;
  /** Runs `run` after the current tick's continuations. */
  soon(run: () => void): void;
  later(run: () => void, ms: number): unknown;
  cancel(handle: unknown): void;
}

export const processClock: PacerClock = {
  now: () => performance.now(),
  soon: (run) => process.nextTick(run),
  later: (run, ms) => setTimeout(run, ms),
  cancel: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class SsePacer {
  private pending = '';
  private scheduled = false;
  private timer: unknown = null;
  /** When the last write left once words were out (null before the first words). */
  private lastWriteAt: number | null = null;
  private pendingWords = false;
  private ended = false;

  constructor(
    private readonly out: SseOutput,
    private readonly clock: PacerClock = processClock,
  ) {}

  /** The headers leave with the first event, or alone on the next tick if none came. */
  start(): void {
    this.schedule(0);
  }

  event(name: string, data: unknown): void {
    this.pending += `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    if (name === 'delta') this.pendingWords = true;
    if (this.scheduled || this.ended) return;
    this.schedule(
      this.lastWriteAt === null
        ? 0
        : this.lastWriteAt + SSE_FRAME_MS - this.clock.now(),
    );
  }

  /** The events not yet written (for the response's last write); nothing is written after. */
  end(): string {
    if (this.timer !== null) this.clock.cancel(this.timer);
    this.timer = null;
    this.ended = true;
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  private schedule(wait: number): void {
    this.scheduled = true;
    if (wait > 0) this.timer = this.clock.later(this.flush, wait);
    else this.clock.soon(this.flush);
  }

  private readonly flush = (): void => {
    if (this.ended) return;
    this.scheduled = false;
    this.timer = null;
    const text = this.pending;
    this.pending = '';
    if (this.out.closed) return;
    if (text) {
      this.out.write(text);
      if (this.pendingWords || this.lastWriteAt !== null)
        this.lastWriteAt = this.clock.now();
      this.pendingWords = false;
    } else if (!this.out.headersSent) this.out.flushHeaders();
  };
}
