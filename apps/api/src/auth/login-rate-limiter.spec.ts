import { ManualClock } from '../clock/clock';
import {
  LOGIN_MAX_FAILURES,
  LOGIN_WINDOW_MS,
  LoginRateLimiter,
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
      expect(limiter.retryAfterMs('a')).toBe(0);
      limiter.recordFailure('a');
      clock.advance(1000);
    }
    expect(limiter.retryAfterMs('a')).toBe(
      LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES * 1000,
    );
    expect(limiter.retryAfterMs('b')).toBe(0);
    clock.advance(LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES * 1000 + 1);
    expect(limiter.retryAfterMs('a')).toBe(0);
  });

  it('forgets failures after a success', () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) limiter.recordFailure('a');
    limiter.recordSuccess('a');
    expect(limiter.retryAfterMs('a')).toBe(0);
  });
});
