import { Inject, Injectable } from '@nestjs/common';
import type {
  AppConfig,
  WhatsAppAutoReplyLimits,
} from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';

/**
 * The auto-reply's limits, from the checked configuration (`WHATSAPP_*`, see
 * docs/configuration.md; the fields are documented on WhatsAppAutoReplyLimits).
 * Tests and the bench change the instance (`app.get(WhatsAppAutoReplySettings)`)
 * before messages arrive.
 */
@Injectable()
export class WhatsAppAutoReplySettings implements WhatsAppAutoReplyLimits {
  staleMs!: number;
  perContactIntervalMs!: number;
  perMinute!: number;
  loopReplies!: number;
  loopWindowMs!: number;
  loopPauseMs!: number;
  concurrentTurns!: number;
  /** How long a message waits for a reply the owner started in the contact's chat before it fails. */
  busyChatWaitMs = 5 * 60_000;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    Object.assign(this, config.whatsappAutoReply);
  }
}
