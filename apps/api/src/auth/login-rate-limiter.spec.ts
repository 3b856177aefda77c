import { ManualClock } from '../clock/clock';
import { deviceTokenFor, verifiedDeviceId } from './login-device';
import {
  LOGIN_GLOBAL_MAX_FAILURES,
  LOGIN_MAX_FAILURES,
  LOGIN_WINDOW_MS,
  LoginRateLimiter,
  clientBucket,
  waitInWords,
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

describe('LoginRateLimiter: sources and the global ceiling', () => {
  let clock: ManualClock;
  let limiter: LoginRateLimiter;
  const owner = { address: '127.0.0.1', device: 'owner-phone' };

  beforeEach(() => {
    clock = new ManualClock();
    limiter = new LoginRateLimiter(clock);
  });

  it('gives a known device its own count: guesses from its address never lock it out', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++)
      expect(limiter.reserve({ address: '127.0.0.1' })).toBe(0);
    expect(limiter.wait({ address: '127.0.0.1' })).toEqual({
      waitMs: LOGIN_WINDOW_MS,
      scope: 'source',
    });
    // Another device id is another source; no device at all is the address.
    expect(limiter.wait(owner)).toBeNull();
    expect(limiter.reserve(owner)).toBe(0);
    expect(limiter.reserve({ address: '::1', device: null })).toBeGreaterThan(
      0,
    );
  });

  it('still limits a known device by its own failures', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++)
      expect(limiter.reserve(owner)).toBe(0);
    expect(limiter.wait(owner)?.scope).toBe('source');
    expect(limiter.wait({ ...owner, address: '10.9.9.9' })?.scope).toBe(
      'source',
    );
    limiter.recordSuccess(owner);
    expect(limiter.wait(owner)).toBeNull();
  });

  it('caps the failures of all addresses together, but not of known devices', () => {
    for (let i = 0; i < LOGIN_GLOBAL_MAX_FAILURES; i++) {
      expect(limiter.reserve(`203.0.113.${i + 1}`)).toBe(0);
      clock.advance(1000);
    }
    const wait = limiter.wait('198.51.100.7');
    expect(wait).toEqual({
      waitMs: LOGIN_WINDOW_MS - LOGIN_GLOBAL_MAX_FAILURES * 1000,
      scope: 'global',
    });
    expect(limiter.reserve('198.51.100.7')).toBe(wait?.waitMs);
    expect(limiter.wait(owner)).toBeNull();
    // The oldest failure leaves the window: one more address may try.
    clock.advance(LOGIN_WINDOW_MS - LOGIN_GLOBAL_MAX_FAILURES * 1000 + 1);
    expect(limiter.reserve('198.51.100.7')).toBe(0);
    expect(limiter.reserve('198.51.100.8')).toBeGreaterThan(0);
  });

  it('counts tries left from the nearer of the two limits', () => {
    expect(limiter.attemptsLeft('10.0.0.1')).toBe(LOGIN_MAX_FAILURES);
    for (let i = 0; i < 3; i++) limiter.reserve('10.0.0.1');
    expect(limiter.attemptsLeft('10.0.0.1')).toBe(LOGIN_MAX_FAILURES - 3);
    expect(limiter.failuresOf('10.0.0.1')).toBe(3);
    for (let i = 0; i < LOGIN_GLOBAL_MAX_FAILURES - 4; i++)
      limiter.reserve(`203.0.113.${i + 1}`);
    expect(limiter.attemptsLeft('10.0.0.9')).toBe(1);
    expect(limiter.attemptsLeft(owner)).toBe(LOGIN_MAX_FAILURES);
  });

  it.each([
    [1, '1 minute'],
    [59_999, '1 minute'],
    [60_000, '1 minute'],
    [60_001, '2 minutes'],
    [894_000, '15 minutes'],
    [LOGIN_WINDOW_MS, '15 minutes'],
  ])('says a wait of %d ms as %s', (ms, words) => {
    expect(waitInWords(ms)).toBe(words);
  });
});

describe('login device cookie', () => {
  const hash = '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA';

  it('verifies only a token signed for the current password hash', () => {
    const token = deviceTokenFor(hash);
    const id = verifiedDeviceId(token, hash);
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(deviceTokenFor(hash, id ?? '')).toBe(token);
    const [tokenId, mac] = token.split('.');
    for (const forged of [
      undefined,
      42,
      '',
      tokenId,
      `${tokenId}.`,
      `other.${mac}`,
      `${tokenId}.${mac}x`,
      `${tokenId}.${mac}.x`,
      `${tokenId}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      'x'.repeat(300),
    ])
      expect(verifiedDeviceId(forged, hash)).toBeNull();
    // A new password forgets every device.
    expect(verifiedDeviceId(token, `${hash}x`)).toBeNull();
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
