import { Injectable } from '@nestjs/common';

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  return Number.isFinite(value) && value >= min ? value : fallback;
}

/**
 * The auto-reply's limits. Read from the environment once; tests and the bench
 * change the instance (`app.get(WhatsAppAutoReplySettings)`) before messages arrive.
 */
@Injectable()
export class WhatsAppAutoReplySettings {
  /** Messages older than this (their own time) are marked `stale` and never answered (`WHATSAPP_STALE_HOURS`, 6). */
  staleMs = envNumber('WHATSAPP_STALE_HOURS', 6, 0) * 3_600_000;
  /** At most one reply per contact this often (`WHATSAPP_REPLY_INTERVAL_MS`, 10 s); 0 turns it off. */
  perContactIntervalMs = envNumber('WHATSAPP_REPLY_INTERVAL_MS', 10_000, 0);
  /** At most this many replies per minute over all contacts (`WHATSAPP_REPLIES_PER_MINUTE`, 30); 0 turns it off. */
  perMinute = envNumber('WHATSAPP_REPLIES_PER_MINUTE', 30, 0);
  /** Bot-loop guard: this many replies to one contact within `loopWindowMs` pause it (`WHATSAPP_LOOP_REPLIES`, 10); 0 turns it off. */
  loopReplies = envNumber('WHATSAPP_LOOP_REPLIES', 10, 0);
  loopWindowMs = envNumber('WHATSAPP_LOOP_WINDOW_MS', 180_000, 1);
  /** How long a looping contact gets no auto-replies (`WHATSAPP_LOOP_PAUSE_MS`, 30 min). */
  loopPauseMs = envNumber('WHATSAPP_LOOP_PAUSE_MS', 30 * 60_000, 0);
  /** How long a message waits for a reply the owner started in the contact's chat before it fails. */
  busyChatWaitMs = 5 * 60_000;
}
