import { Injectable } from '@nestjs/common';
import { isIPv4, isIPv6 } from 'node:net';
import { Clock } from '../clock/clock';

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/**
 * Failures of all sources without a known device together, per window: an
 * attacker spreading guesses over many addresses gets no more than this.
 */
export const LOGIN_GLOBAL_MAX_FAILURES = 20;
/** From this many failures of a source on, a wrong password says how many tries are left. */
export const LOGIN_WARN_FROM_FAILURE = 3;
const MAX_TRACKED_CLIENTS = 10_000;
const GLOBAL = 'global';

/**
 * Who is trying to log in: the client address, and the id of a device that
 * logged in before (its cookie verified by the caller), when there is one.
 */
export interface LoginSource {
  address: string | undefined;
  device?: string | null;
}

/** Why a source must wait: its own failures, or the ceiling over all sources. */
export interface LoginWait {
  waitMs: number;
  scope: 'source' | 'global';
}

/**
 * Counts failed logins per source in a sliding window. An attempt is counted
 * as a failure the moment it is reserved, before the password is checked, so
 * parallel guesses cannot all slip in before the first failure is recorded.
 * After LOGIN_MAX_FAILURES the source is refused until the oldest failure
 * leaves the window; a successful login clears its record.
 *
 * A source is a known device (one that logged in before, proved by its signed
 * cookie) or else a bucket of addresses (see `clientBucket`). Known devices
 * have their own count, so guesses from elsewhere (even from the same address,
 * as behind a proxy) never lock the owner's own device out. Sources without a
 * known device also share a global ceiling, LOGIN_GLOBAL_MAX_FAILURES per
 * window, so many addresses guessing together gain nothing.
 */
@Injectable()
export class LoginRateLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds until `source` may try again; 0 when it may try now. */
  retryAfterMs(source: LoginSource | string): number {
    return this.wait(asSource(source))?.waitMs ?? 0;
  }

  /** The wait of a refused source and its reason; `null` when it may try now. */
  wait(source: LoginSource | string): LoginWait | null {
    const from = asSource(source);
    const own = this.recent(sourceKey(from));
    const now = this.clock.now().getTime();
    if (own.length >= LOGIN_MAX_FAILURES)
      return {
        waitMs: Math.max(1, own[0] + LOGIN_WINDOW_MS - now),
        scope: 'source',
      };
    if (!from.device) {
      const all = this.recent(GLOBAL);
      if (all.length >= LOGIN_GLOBAL_MAX_FAILURES)
        return {
          waitMs: Math.max(
            1,
            all[all.length - LOGIN_GLOBAL_MAX_FAILURES] + LOGIN_WINDOW_MS - now,
          ),
          scope: 'global',
        };
    }
    return null;
  }

  /**
   * Checks and counts in one synchronous step: returns 0 and counts the attempt
   * as a failure (until `recordSuccess` or `release`), or the milliseconds to
   * wait without counting anything.
   */
  reserve(source: LoginSource | string): number {
    const from = asSource(source);
    const wait = this.retryAfterMs(from);
    if (wait > 0) return wait;
    if (this.failures.size >= MAX_TRACKED_CLIENTS) this.forgetExpired();
    const now = this.clock.now().getTime();
    const key = sourceKey(from);
    this.failures.set(key, [...this.recent(key), now]);
    if (!from.device) this.failures.set(GLOBAL, [...this.recent(GLOBAL), now]);
    return 0;
  }

  /**
   * Tries left before `source` is locked (its own count, or the global ceiling
   * when that is nearer); after a failed attempt, what to tell the client.
   */
  attemptsLeft(source: LoginSource | string): number {
    const from = asSource(source);
    const own = LOGIN_MAX_FAILURES - this.recent(sourceKey(from)).length;
    const global = from.device
      ? Infinity
      : LOGIN_GLOBAL_MAX_FAILURES - this.recent(GLOBAL).length;
    return Math.max(0, Math.min(own, global));
  }

  /** Failures of `source` in the window. */
  failuresOf(source: LoginSource | string): number {
    return this.recent(sourceKey(asSource(source))).length;
  }

  /** Gives back a reserved attempt that checked no password (no owner yet, database error). */
  release(source: LoginSource | string): void {
    const from = asSource(source);
    this.dropLatest(sourceKey(from));
    if (!from.device) this.dropLatest(GLOBAL);
  }

  recordSuccess(source: LoginSource | string): void {
    this.failures.delete(sourceKey(asSource(source)));
  }

  private dropLatest(key: string): void {
    const recent = this.recent(key);
    recent.pop();
    if (recent.length) this.failures.set(key, recent);
    else this.failures.delete(key);
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

function asSource(source: LoginSource | string): LoginSource {
  return typeof source === 'string' ? { address: source } : source;
}

function sourceKey(source: LoginSource): string {
  return source.device
    ? `device:${source.device}`
    : `address:${clientBucket(source.address)}`;
}

/** "15 minutes", "1 minute": a wait as people say it, rounded up to whole minutes. */
export function waitInWords(waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
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
