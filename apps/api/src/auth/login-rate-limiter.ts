import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

/**
 * Counts failed logins per client address in a sliding window. After
 * LOGIN_MAX_FAILURES failures the client is refused until the oldest failure
 * leaves the window; a successful login clears its record.
 */
@Injectable()
export class LoginRateLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds until `client` may try again; 0 when it may try now. */
  retryAfterMs(client: string): number {
    const recent = this.recent(client);
    if (recent.length < LOGIN_MAX_FAILURES) return 0;
    return recent[0] + LOGIN_WINDOW_MS - this.clock.now().getTime();
  }

  recordFailure(client: string): void {
    this.failures.set(client, [
      ...this.recent(client),
      this.clock.now().getTime(),
    ]);
  }

  recordSuccess(client: string): void {
    this.failures.delete(client);
  }

  private recent(client: string): number[] {
    const since = this.clock.now().getTime() - LOGIN_WINDOW_MS;
    const recent = (this.failures.get(client) ?? []).filter((at) => at > since);
    if (recent.length) this.failures.set(client, recent);
    else this.failures.delete(client);
    return recent;
  }
}
