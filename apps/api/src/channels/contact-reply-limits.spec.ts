import { ManualClock } from '../clock/clock';
import { ContactReplyLimits } from './contact-reply-limits';

const ALICE = '15551230001';
const BOB = '15551230002';

describe('ContactReplyLimits', () => {
  let clock: ManualClock;
  let settings: {
    perContactIntervalMs: number;
    perMinute: number;
    loopReplies: number;
    loopWindowMs: number;
    loopPauseMs: number;
  };
  let limits: ContactReplyLimits;

  beforeEach(() => {
    clock = new ManualClock(new Date('2026-11-21T10:00:00Z'));
    settings = {
      perContactIntervalMs: 10_000,
      perMinute: 3,
      loopReplies: 4,
      loopWindowMs: 60_000,
      loopPauseMs: 30 * 60_000,
    };
    limits = new ContactReplyLimits(clock, settings);
  });

  it('holds a contact back until the interval since its last reply has passed, other contacts not', () => {
    expect(limits.contactWaitMs(ALICE)).toBe(0);
    limits.recordReply(ALICE);
    clock.advance(4_000);
    expect(limits.contactWaitMs(ALICE)).toBe(6_000);
    expect(limits.contactWaitMs(BOB)).toBe(0);
    clock.advance(6_000);
    expect(limits.contactWaitMs(ALICE)).toBe(0);
    settings.perContactIntervalMs = 0;
    limits.recordReply(ALICE);
    expect(limits.contactWaitMs(ALICE)).toBe(0);
  });

  it('books at most perMinute replies in any minute overall, each after the one a minute before', () => {
    expect([
      limits.bookOverallSlot(),
      limits.bookOverallSlot(),
      limits.bookOverallSlot(),
    ]).toEqual([0, 0, 0]);
    clock.advance(20_000);
    // The fourth waits for the first to leave the minute, the fifth for the second.
    expect(limits.bookOverallSlot()).toBe(40_000);
    expect(limits.bookOverallSlot()).toBe(40_000);
    clock.advance(40_000);
    expect(limits.bookOverallSlot()).toBe(0);
    expect(limits.bookOverallSlot()).toBe(60_000);
    settings.perMinute = 0;
    expect(limits.bookOverallSlot()).toBe(0);
  });

  it('pauses a contact whose replies pile up within the window, and counts again afterwards', () => {
    for (let i = 0; i < 3; i++) {
      expect(limits.recordReply(ALICE)).toBeNull();
      clock.advance(10_000);
    }
    expect(limits.recordReply(BOB)).toBeNull();
    expect(limits.recordReply(ALICE)).toEqual(
      new Date(clock.now().getTime() + 30 * 60_000),
    );
    // The count starts over after a pause.
    expect(limits.recordReply(ALICE)).toBeNull();
  });

  it('forgets replies older than the loop window', () => {
    for (let i = 0; i < 3; i++) {
      expect(limits.recordReply(ALICE)).toBeNull();
      clock.advance(30_000);
    }
    // The first left the window: three within it, one short of a loop.
    expect(limits.recordReply(ALICE)).toBeNull();
    settings.loopReplies = 0;
    for (let i = 0; i < 10; i++) expect(limits.recordReply(ALICE)).toBeNull();
  });

  it('reads a stored pause against the clock', () => {
    expect(limits.isPaused(null)).toBe(false);
    expect(limits.isPaused(undefined)).toBe(false);
    const until = new Date(clock.now().getTime() + 1_000).toISOString();
    expect(limits.isPaused(until)).toBe(true);
    clock.advance(1_000);
    expect(limits.isPaused(until)).toBe(false);
  });
});
