import type { Clock } from '../clock/clock';
import type { WhatsAppAutoReplyLimits } from '../config/app-config';

const MINUTE_MS = 60_000;

/**
 * The auto-reply's limits on sending, as bookkeeping only (the caller waits):
 * at most one reply per contact per `perContactIntervalMs`, `perMinute`
 * replies per minute overall, and a pause for a contact that gets
 * `loopReplies` replies within `loopWindowMs` (a conversation with another
 * bot). Every time is read from the clock; the limits are read on each call,
 * so a change of the settings applies to the next reply.
 */
export class ContactReplyLimits {
  private readonly lastReplyAt = new Map<string, number>();
  private readonly recentReplies = new Map<string, number[]>();
  /** Times of the replies sent or booked overall, oldest first (some may lie ahead). */
  private slots: number[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly limits: Pick<
      WhatsAppAutoReplyLimits,
      | 'perContactIntervalMs'
      | 'perMinute'
      | 'loopReplies'
      | 'loopWindowMs'
      | 'loopPauseMs'
    >,
  ) {}

  /** Milliseconds until `phone` may get its next reply; 0 when it may now. */
  contactWaitMs(phone: string): number {
    const last = this.lastReplyAt.get(phone);
    const { perContactIntervalMs } = this.limits;
    if (perContactIntervalMs <= 0 || last === undefined) return 0;
    return Math.max(0, last + perContactIntervalMs - this.now());
  }

  /**
   * Books the next free place in the overall limit and says how many
   * milliseconds away it is (0: now). Booking at once means two contacts
   * never both take the last place of a minute.
   */
  bookOverallSlot(): number {
    const { perMinute } = this.limits;
    if (perMinute <= 0) return 0;
    const now = this.now();
    this.slots = this.slots.filter((at) => at > now - MINUTE_MS);
    // The perMinute-th latest booking must have left the minute before the new one.
    const blocking = this.slots[this.slots.length - perMinute];
    const at =
      blocking === undefined ? now : Math.max(now, blocking + MINUTE_MS);
    this.slots.push(at);
    return at - now;
  }

  /**
   * Records a reply sent to `phone`. Returns until when the contact is paused
   * when its replies pile up like a bot loop (its count starts over), else null.
   */
  recordReply(phone: string): Date | null {
    const now = this.now();
    this.lastReplyAt.set(phone, now);
    const { loopReplies, loopWindowMs, loopPauseMs } = this.limits;
    if (loopReplies <= 0) return null;
    const recent = (this.recentReplies.get(phone) ?? []).filter(
      (at) => at > now - loopWindowMs,
    );
    recent.push(now);
    if (recent.length < loopReplies) {
      this.recentReplies.set(phone, recent);
      return null;
    }
    this.recentReplies.delete(phone);
    return new Date(now + loopPauseMs);
  }

  /** Whether a pause stored on the permission (ISO time or null) still holds. */
  isPaused(pausedUntil: string | null | undefined): boolean {
    return !!pausedUntil && Date.parse(pausedUntil) > this.now();
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
