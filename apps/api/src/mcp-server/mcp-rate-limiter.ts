import { MCP_REQUESTS_PER_MINUTE } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';

const WINDOW_MS = 60_000;

/**
 * Requests per token in a sliding minute, so one runaway agent cannot flood
 * the server or the owner's data sources. In memory: a restart forgets, which
 * only ever lets a client start fresh.
 */
export class McpRateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly limit: number = MCP_REQUESTS_PER_MINUTE,
  ) {}

  /** Counts a request of `key`; returns 0 when it may go on, else the milliseconds to wait. */
  take(key: string): number {
    const now = this.clock.now().getTime();
    const recent = (this.hits.get(key) ?? []).filter(
      (at) => at > now - WINDOW_MS,
    );
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return recent[0] + WINDOW_MS - now;
    }
    recent.push(now);
    this.hits.set(key, recent);
    return 0;
  }

  /** Forgets a revoked token. */
  forget(key: string): void {
    this.hits.delete(key);
  }
}
