import { ManualClock } from '../clock/clock';
import {
  LOGIN_MAX_FAILURES,
  LOGIN_WINDOW_MS,
  LoginRateLimiter,
  clientBucket,
} from './login-rate-limiter';

describe('LoginRateLimiter', () => {
  let clock: ManualClock;
  let limiter: LoginRateLimiter;

  beforeEach(() => {
    clock = new ManualClock();
    limiter = new LoginRateLimiter(clock);
  });

  it('allows attempts until the limit, then refuses until the oldest failure expires', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) {
      expect(limiter.reserve('10.0.0.1')).toBe(0);
      clock.advance(1000);
    }
    expect(limiter.reserve('10.0.0.1')).toBe(
      LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES * 1000,
    );
    expect(limiter.reserve('10.0.0.2')).toBe(0);
    clock.advance(LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES * 1000 + 1);
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(0);
  });

  it('counts an attempt the moment it is reserved: parallel attempts beyond the limit are refused', () => {
    const granted = Array.from({ length: 30 }, () =>
      limiter.reserve('10.0.0.1'),
    ).filter((wait) => wait === 0);
    expect(granted).toHaveLength(LOGIN_MAX_FAILURES);
  });

  it('a refused attempt does not extend the wait', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) limiter.reserve('10.0.0.1');
    clock.advance(1000);
    for (let i = 0; i < 10; i++) limiter.reserve('10.0.0.1');
    clock.advance(LOGIN_WINDOW_MS - 1000 + 1);
    expect(limiter.reserve('10.0.0.1')).toBe(0);
  });

  it('forgets failures after a success', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) limiter.reserve('10.0.0.1');
    limiter.recordSuccess('10.0.0.1');
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(0);
  });

  it('gives back a released attempt (one that checked no password)', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) {
      limiter.reserve('10.0.0.1');
      limiter.release('10.0.0.1');
    }
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(0);
  });

  it('counts every loopback address and every address of one IPv6 /64 as one client', () => {
    const addresses = [
      '127.0.0.1',
      '::ffff:127.0.0.1',
      '::1',
      '127.0.0.2',
      '127.255.0.9',
    ];
    for (const address of addresses) expect(limiter.reserve(address)).toBe(0);
    expect(limiter.reserve('::ffff:127.0.0.3')).toBeGreaterThan(0);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++)
      limiter.reserve(`2001:db8:1:2::${i + 1}`);
    expect(limiter.reserve('2001:db8:1:2:ffff::9')).toBeGreaterThan(0);
    expect(limiter.reserve('2001:db8:1:3::1')).toBe(0);
  });
});

describe('clientBucket', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::FFFF:127.1.2.3', 'loopback'],
    ['::ffff:7f00:2', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['10.1.2.3', '10.1.2.3'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::9', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['', 'unknown'],
    [undefined, 'unknown'],
  ])('%s → %s', (address, bucket) => {
    expect(clientBucket(address)).toBe(bucket);
  });
});
