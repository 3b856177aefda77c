import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AiModeProvider,
  AiToolProvider,
  toolError,
  type AiMode,
  type AiTool,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import { Clock } from '../clock/clock';
import { ContactChannelRouter, ContactSendError } from './contact-channel';
import type { ContactScope } from '../actions/tool-turn';

export const CONTACTS_MODE = 'contacts';

@AiModeProvider()
@Injectable()
export class ContactsMode implements AiMode {
  readonly name = CONTACTS_MODE;
  readonly description =
    "Send a message to one of the owner's contacts on a connected channel (WhatsApp).";
}

const MESSAGE_MAX_LENGTH = 4096;

const CONTACTS_SEND_ARGS = z.object({
  contact_id: z
    .string()
    .max(64)
    .describe(
      'The contact: "wa:<phone digits>" for WhatsApp, e.g. "wa:14155551234"',
    ),
  message_text: z.string().max(MESSAGE_MAX_LENGTH).describe('The text to send'),
});

/**
 * The seed's `contacts_send`: one message to one contact, routed by the id's
 * prefix to its channel, which sends only to contacts the owner allowed replies
 * to. Whether it runs, waits for the owner or is refused (an unattended run's
 * send limit) is the action policy's call (apps/api/src/actions).
 */
@AiToolProvider()
@Injectable()
export class ContactsSendTool implements AiTool<typeof CONTACTS_SEND_ARGS> {
  readonly name = 'contacts_send';
  readonly description =
    'Send one text message to a contact (id "wa:<digits>"). Only contacts the owner allowed replies to can be messaged. ' +
    'In a chat with the owner, confirm before sending.';
  readonly schema = CONTACTS_SEND_ARGS;
  readonly promptLine =
    'send a message to a contact with reply permission (confirm with the owner first).';
  readonly modes = [CONTACTS_MODE];

  constructor(
    private readonly router: ContactChannelRouter,
    private readonly clock: Clock,
  ) {}

  effect(): 'send' {
    return 'send';
  }

  summarize(args: z.output<typeof CONTACTS_SEND_ARGS>): string {
    const target = this.router.route(args.contact_id);
    const to = target.ok
      ? `${target.channel.label} ${target.address}`
      : args.contact_id;
    return `Send to ${to}: “${args.message_text.trim()}”`;
  }

  contactTargets(args: z.output<typeof CONTACTS_SEND_ARGS>): ContactScope[] {
    const target = this.router.route(args.contact_id);
    if (!target.ok) return [{ channel: 'whatsapp', address: args.contact_id }];
    return [
      {
        channel: target.channel.prefix === 'tg' ? 'telegram' : 'whatsapp',
        address: target.address,
      },
    ];
  }

  isAvailable(): boolean {
    return this.router.all().some((c) => c.connected);
  }

  unavailableReason(): string | null {
    return this.isAvailable()
      ? null
      : 'No messaging channel is connected (connect WhatsApp first).';
  }

  async execute(
    args: z.output<typeof CONTACTS_SEND_ARGS>,
    _context: AiToolContext,
  ): Promise<string> {
    if (!args.contact_id.trim()) return toolError('contact_id is required');
    const text = args.message_text.trim();
    if (!text) return toolError('message_text is required');
    const target = this.router.route(args.contact_id);
    if (!target.ok) return toolError(target.error);
    try {
      const sent = await target.channel.send(target.address, text);
      return JSON.stringify({
        ok: true,
        contact_id: `${target.channel.prefix}:${target.address}`,
        channel: target.channel.label,
        to: sent.to,
        sent_at: this.clock.now().toISOString(),
      });
    } catch (error) {
      if (error instanceof ContactSendError) return toolError(error.message);
      throw error;
    }
  }
}
