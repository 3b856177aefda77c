/**
 * How the fake answers over HTTP: JSON bodies, SSE streams written chunk by
 * chunk, and waits that end early when the client goes away.
 */
import type { ServerResponse } from 'node:http';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

/** Writes chunks with optional delays, stopping quietly when the client went away. */
export class ChunkWriter {
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.wake?.();
    });
  }

  get gone(): boolean {
    return this.closed || this.res.destroyed;
  }

  write(data: string): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.res.write(data, () => resolve());
    });
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.wake = null;
        resolve();
      }, ms);
    });
  }

  /** Sends nothing more, keeping the connection open, until the client goes away (a stalled upstream). */
  async stall(): Promise<void> {
    while (!this.gone) await this.sleep(60_000);
  }

  /** Cuts the connection without finishing the chunked body, as a dropped upstream would. */
  async cut(): Promise<void> {
    await this.sleep(20);
    this.res.socket?.destroy();
  }
}

/** Waits `ms`, or less when the client went away. */
export function pause(
  res: ServerResponse,
  ms: number | undefined,
): Promise<void> {
  if (!ms || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done() {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
  });
}

export function clientGone(res: ServerResponse): boolean {
  return res.destroyed || !res.socket || res.socket.destroyed;
}

let idCounter = 0;
/** A unique id in the provider's style (`chatcmpl-…`, `call_…`, `resp-…`). */
export function randomId(prefix: string): string {
  idCounter += 1;
  return `${prefix}${Date.now().toString(36)}${idCounter.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
