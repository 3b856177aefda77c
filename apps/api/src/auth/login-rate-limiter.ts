import { Injectable } from '@nestjs/common';
import { isIPv4, isIPv6 } from 'node:net';
import { Clock } from '../clock/clock';

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * Counts login attempts per client in a sliding window. An attempt is counted
 * as a failure the moment it is reserved, before the password is checked, so
 * parallel guesses cannot all slip in before the first failure is recorded.
 * After LOGIN_MAX_FAILURES the client is refused until the oldest failure
 * leaves the window; a successful login clears its record.
 *
 * Clients are buckets of addresses (see `clientBucket`): every loopback address
 * is one client, and an IPv6 client is its /64 network.
 */
@Injectable()
export class LoginRateLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds until `address` may try again; 0 when it may try now. */
  retryAfterMs(address: string): number {
    const recent = this.recent(clientBucket(address));
    if (recent.length < LOGIN_MAX_FAILURES) return 0;
    return Math.max(
      1,
      recent[0] + LOGIN_WINDOW_MS - this.clock.now().getTime(),
    );
  }

  /**
   * Checks and counts in one synchronous step: returns 0 and counts the attempt
   * as a failure (until `recordSuccess` or `release`), or the milliseconds to
   * wait without counting anything.
   */
  reserve(address: string): number {
    const wait = this.retryAfterMs(address);
    if (wait > 0) return wait;
    const client = clientBucket(address);
    if (this.failures.size >= MAX_TRACKED_CLIENTS) this.forgetExpired();
    this.failures.set(client, [
      ...this.recent(client),
      this.clock.now().getTime(),
    ]);
    return 0;
  }

  /** Gives back a reserved attempt that checked no password (no owner yet, database error). */
  release(address: string): void {
    const client = clientBucket(address);
    const recent = this.recent(client);
    recent.pop();
    if (recent.length) this.failures.set(client, recent);
    else this.failures.delete(client);
  }

  recordSuccess(address: string): void {
    this.failures.delete(clientBucket(address));
  }

  /** Many addresses guessing at once must not grow the map without end. */
  private forgetExpired(): void {
    for (const client of [...this.failures.keys()]) this.recent(client);
  }

  private recent(client: string): number[] {
    const since = this.clock.now().getTime() - LOGIN_WINDOW_MS;
    const recent = (this.failures.get(client) ?? []).filter((at) => at > since);
    if (recent.length) this.failures.set(client, recent);
    else this.failures.delete(client);
    return recent;
  }
}

/**
 * The rate-limit bucket of a client address. All loopback addresses
 * (`127.0.0.0/8`, `::1`, and their IPv4-mapped forms) are one client: an
 * attacker on this machine can use any of them. An IPv6 client is its /64,
 * which one host usually holds whole. Anything else is the address itself.
 */
export function clientBucket(address: string | undefined): string {
  const text = (address ?? '').trim().toLowerCase().replace(/%.*$/, '');
  if (isIPv4(text)) return ipv4Bucket(text);
  if (!isIPv6(text)) return text || 'unknown';
  const groups = ipv6Groups(text);
  if (groups.slice(0, 5).every((g) => g === 0)) {
    // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible) are IPv4 clients.
    if (groups[5] === 0xffff || (groups[5] === 0 && groups[6] !== 0))
      return ipv4Bucket(
        [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(
          '.',
        ),
      );
    if (groups[5] === 0 && groups[6] === 0 && groups[7] === 1)
      return 'loopback';
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

function ipv4Bucket(address: string): string {
  return address.startsWith('127.') ? 'loopback' : address;
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` and a dotted IPv4 tail expanded). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros =
    tail === undefined
      ? []
      : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((g) => parseInt(g, 16));
}
