import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';

/**
 * The auto-reply's limits, from the checked configuration (`WHATSAPP_*`, see
 * docs/configuration.md). Tests and the bench change the instance
 * (`app.get(WhatsAppAutoReplySettings)`) before messages arrive.
 */
@Injectable()
export class WhatsAppAutoReplySettings {
  /** Messages older than this (their own time) are marked `stale` and never answered. */
  staleMs: number;
  /** At most one reply per contact this often; 0 turns it off. */
  perContactIntervalMs: number;
  /** At most this many replies per minute over all contacts; 0 turns it off. */
  perMinute: number;
  /** Bot-loop guard: this many replies to one contact within `loopWindowMs` pause it; 0 turns it off. */
  loopReplies: number;
  loopWindowMs: number;
  /** How long a looping contact gets no auto-replies. */
  loopPauseMs: number;
  /** How long a message waits for a reply the owner started in the contact's chat before it fails. */
  busyChatWaitMs = 5 * 60_000;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    ({
      staleMs: this.staleMs,
      perContactIntervalMs: this.perContactIntervalMs,
      perMinute: this.perMinute,
      loopReplies: this.loopReplies,
      loopWindowMs: this.loopWindowMs,
      loopPauseMs: this.loopPauseMs,
    } = config.whatsappAutoReply);
  }
}
