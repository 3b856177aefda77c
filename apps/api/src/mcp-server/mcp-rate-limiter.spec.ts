import { ManualClock } from '../clock/clock';
import { McpRateLimiter } from './mcp-rate-limiter';

describe('McpRateLimiter', () => {
  it('lets a token make its allowance per minute, then says how long to wait', () => {
    const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    const limiter = new McpRateLimiter(clock, 3);
    expect([1, 2, 3].map(() => limiter.take('a'))).toEqual([0, 0, 0]);
    clock.advance(10_000);
    expect(limiter.take('a')).toBe(50_000);
    // Another token has its own allowance.
    expect(limiter.take('b')).toBe(0);
    clock.advance(50_000);
    expect(limiter.take('a')).toBe(0);
  });

  it('does not count refused requests, and forgets a revoked token', () => {
    const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    const limiter = new McpRateLimiter(clock, 1);
    expect(limiter.take('a')).toBe(0);
    for (let i = 0; i < 5; i++) expect(limiter.take('a')).toBeGreaterThan(0);
    clock.advance(60_001);
    expect(limiter.take('a')).toBe(0);
    limiter.forget('a');
    expect(limiter.take('a')).toBe(0);
  });
});
