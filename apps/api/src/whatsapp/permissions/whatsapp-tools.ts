import { Injectable } from '@nestjs/common';
import { NotFoundException } from '@nestjs/common';
import {
  WHATSAPP_MESSAGES_MAX_LIMIT,
  WHATSAPP_TOOL_MESSAGES_DEFAULT_LIMIT,
  type WhatsAppPermission,
} from '@metatronos/shared-types';
import { z } from 'zod';
import type { ContactScope } from '../../actions/tool-turn';
import { idArgument } from '../../ai-tools/lenient-arguments';
import { AiToolProvider, toolError, type AiTool } from '../../ai-tools/ai-tool';
import { WhatsAppLink } from './whatsapp-link';
import {
  INVALID_PHONE_NUMBER,
  normalisePhoneNumber,
  PERMISSION_NOT_FOUND,
  WHATSAPP_DISPLAY_NAME_MAX_LENGTH,
} from './whatsapp-permission-input';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';

/** Longest text whatsapp_send_message sends in one message. */
export const WHATSAPP_SEND_MAX_LENGTH = 4096;

/**
 * What every WhatsApp tool shares: the link and the contact permissions (injected here once for all of them),
 * and being offered only while WhatsApp is connected.
 */
@Injectable()
abstract class WhatsAppTool {
  constructor(
    protected readonly link: WhatsAppLink,
    protected readonly permissions: WhatsAppPermissionsService,
  ) {}

  isAvailable(): boolean {
    return this.link.connected;
  }

  unavailableReason(): string | null {
    return this.link.connected ? null : 'WhatsApp is not linked.';
  }
}

const READ_MESSAGES_ARGS = z.object({
  contact: z
    .string()
    .optional()
    .describe('Phone number to filter by, digits only (e.g. "14155551234")'),
  // A number, not an integer: any count is clamped to 1…max rather than refused.
  limit: z
    .number()
    .optional()
    .describe(
      `Maximum messages to return (default ${WHATSAPP_TOOL_MESSAGES_DEFAULT_LIMIT}, max ${WHATSAPP_MESSAGES_MAX_LIMIT})`,
    ),
});

/** The seed's whatsapp_read_messages: recent messages, only from/to contacts with canRead. */
@AiToolProvider()
@Injectable()
export class WhatsAppReadMessagesTool
  extends WhatsAppTool
  implements AiTool<typeof READ_MESSAGES_ARGS>
{
  readonly name = 'whatsapp_read_messages';
  readonly modes = ['whatsapp'];
  readonly description =
    'Read recent WhatsApp messages (oldest first). Only contacts with read permission (canRead) are visible; ' +
    'give contact to read one conversation, or leave it out for all readable contacts.';
  readonly schema = READ_MESSAGES_ARGS;
  readonly promptLine = 'read recent WhatsApp messages of readable contacts.';

  contactTargets(
    args: z.output<typeof READ_MESSAGES_ARGS>,
  ): ContactScope[] | 'all' {
    return args.contact?.trim() ? [whatsAppTarget(args.contact)] : 'all';
  }

  /** Contacts' messages are their words, not the owner's. */
  taint(
    args: z.output<typeof READ_MESSAGES_ARGS>,
    result: string,
  ): { text: string } | null {
    if (/"messages":\[\]/.test(result)) return null;
    return {
      text: args.contact?.trim()
        ? `WhatsApp messages of +${normalisePhoneNumber(args.contact) ?? args.contact}`
        : "contacts' WhatsApp messages",
    };
  }

  async execute(args: z.output<typeof READ_MESSAGES_ARGS>): Promise<string> {
    const gateway = this.link.use();
    const limit = clampLimit(args.limit);
    const contact = args.contact?.trim() ? args.contact : undefined;
    if (contact !== undefined) {
      const phone = normalisePhoneNumber(contact);
      if (!phone) return toolError(INVALID_PHONE_NUMBER);
      const permission = await this.permissions.findByPhone(phone);
      if (!permission?.canRead)
        return toolError(
          `No read permission for ${phone}: the owner has not allowed you to read this contact`,
        );
      return JSON.stringify({
        messages: await gateway.getMessages({
          contact: phone,
          limit,
          onlyPhones: [phone],
        }),
      });
    }
    const phones = await this.permissions.readablePhones();
    if (phones.length === 0) return JSON.stringify({ messages: [] });
    return JSON.stringify({
      messages: await gateway.getMessages({ limit, onlyPhones: phones }),
    });
  }
}

const SEND_MESSAGE_ARGS = z.object({
  phone: idArgument(z.string()).describe(
    'International format, digits only (e.g. "14155551234"; a number or a string)',
  ),
  message: z.string().max(WHATSAPP_SEND_MAX_LENGTH).describe('Text to send'),
});

/** The seed's whatsapp_send_message: text to a contact with canReply. */
@AiToolProvider()
@Injectable()
export class WhatsAppSendMessageTool
  extends WhatsAppTool
  implements AiTool<typeof SEND_MESSAGE_ARGS>
{
  readonly name = 'whatsapp_send_message';
  readonly modes = ['whatsapp'];
  readonly description =
    'Send a WhatsApp text message to a contact with reply permission (canReply). Always confirm with the user before sending.';
  readonly schema = SEND_MESSAGE_ARGS;
  readonly promptLine =
    'send a WhatsApp text. Always confirm with the user before sending.';

  effect(): 'send' {
    return 'send';
  }

  summarize(args: z.output<typeof SEND_MESSAGE_ARGS>): string {
    return `WhatsApp to +${normalisePhoneNumber(args.phone) ?? args.phone}: “${args.message}”`;
  }

  contactTargets(args: z.output<typeof SEND_MESSAGE_ARGS>): ContactScope[] {
    return [whatsAppTarget(args.phone)];
  }

  async execute({
    phone: rawPhone,
    message,
  }: z.output<typeof SEND_MESSAGE_ARGS>): Promise<string> {
    const gateway = this.link.use();
    const phone = normalisePhoneNumber(rawPhone);
    if (!phone) return toolError(INVALID_PHONE_NUMBER);
    if (!message.trim()) return toolError('message must not be empty');
    const permission = await this.permissions.findByPhone(phone);
    if (!permission?.canReply)
      return toolError(
        `No reply permission for ${phone}: the owner has not allowed you to message this contact`,
      );
    const sent = await gateway.sendText(phone, message);
    return JSON.stringify({ success: true, jid: sent.jid });
  }
}

const MANAGE_PERMISSION_ARGS = z.object({
  action: z.enum(['grant', 'update', 'revoke', 'remove']),
  phoneNumber: idArgument(z.string()).describe(
    'Digits only (e.g. "14155551234"; a number or a string)',
  ),
  displayName: z
    .string()
    .max(WHATSAPP_DISPLAY_NAME_MAX_LENGTH)
    .optional()
    .describe('e.g. "Mom"'),
  canRead: z.boolean().optional().describe('You may read their messages'),
  canReply: z
    .boolean()
    .optional()
    .describe('You may reply, automatic replies included'),
  trusted: z.boolean().optional().describe('update only'),
});

/** The seed's whatsapp_manage_permission: grant (upsert), update, revoke (both flags off, record kept), remove. */
@AiToolProvider()
@Injectable()
export class WhatsAppManagePermissionTool
  extends WhatsAppTool
  implements AiTool<typeof MANAGE_PERMISSION_ARGS>
{
  readonly name = 'whatsapp_manage_permission';
  readonly modes = ['whatsapp'];
  readonly description =
    "Change a WhatsApp contact's permissions. grant creates or overwrites the record (needs displayName; canRead defaults to true, " +
    'canReply to false); update changes any of displayName, canRead, canReply, trusted; revoke sets canRead and canReply to false; ' +
    "remove deletes the record. canReply=true contacts get automatic replies; trusted lets those replies see the owner's memory. " +
    'Only change permissions when the owner asks you to.';
  readonly schema = MANAGE_PERMISSION_ARGS;
  readonly promptLine =
    "change a contact's WhatsApp permissions (only when the owner asks).";
  readonly grantsAccess = true;

  summarize(args: z.output<typeof MANAGE_PERMISSION_ARGS>): string {
    const { action, phoneNumber, ...flags } = args;
    return `WhatsApp permission ${action} for +${normalisePhoneNumber(phoneNumber) ?? phoneNumber}${Object.keys(flags).length ? `: ${JSON.stringify(flags)}` : ''}`;
  }

  contactTargets(
    args: z.output<typeof MANAGE_PERMISSION_ARGS>,
  ): ContactScope[] {
    return [whatsAppTarget(args.phoneNumber)];
  }

  async execute(
    args: z.output<typeof MANAGE_PERMISSION_ARGS>,
  ): Promise<string> {
    this.link.use();
    const { action, displayName, canRead, canReply, trusted } = args;
    const phoneNumber = normalisePhoneNumber(args.phoneNumber);
    if (!phoneNumber) return toolError(INVALID_PHONE_NUMBER);
    const done = () => JSON.stringify({ success: true, action, phoneNumber });
    try {
      switch (action) {
        case 'grant':
          if (!displayName?.trim())
            return toolError('displayName is required for grant');
          await this.permissions.grant(
            phoneNumber,
            displayName,
            { canRead, canReply },
            'ai',
          );
          return done();
        case 'update':
          if (
            displayName === undefined &&
            canRead === undefined &&
            canReply === undefined &&
            trusted === undefined
          ) {
            return toolError(
              'update needs at least one of displayName, canRead, canReply, trusted',
            );
          }
          await this.permissions.updateByPhone(
            phoneNumber,
            { displayName, canRead, canReply, trusted },
            'ai',
          );
          return done();
        case 'revoke':
          await this.permissions.updateByPhone(
            phoneNumber,
            { canRead: false, canReply: false },
            'ai',
          );
          return done();
        case 'remove':
          await this.permissions.removeByPhone(phoneNumber, 'ai');
          return done();
      }
    } catch (error) {
      if (error instanceof NotFoundException)
        return toolError(`${PERMISSION_NOT_FOUND} for ${phoneNumber}`);
      throw error;
    }
  }
}

const NO_ARGS = z.object({});

/** The seed's whatsapp_list_permissions. */
@AiToolProvider()
@Injectable()
export class WhatsAppListPermissionsTool
  extends WhatsAppTool
  implements AiTool<typeof NO_ARGS>
{
  readonly name = 'whatsapp_list_permissions';
  readonly modes = ['whatsapp'];
  readonly description =
    'List every WhatsApp contact permission (phoneNumber, displayName, canRead, canReply, trusted), sorted by displayName.';
  readonly schema = NO_ARGS;
  readonly promptLine = "list the WhatsApp contacts' permissions.";

  contactTargets(): 'all' {
    return 'all';
  }

  async execute(): Promise<string> {
    this.link.use();
    return JSON.stringify({
      permissions: (await this.permissions.list()).map(toolPermission),
    });
  }
}

/** A phone as the contact scope compares it (digits; a spelling that is no phone stays as given, so it never matches). */
function whatsAppTarget(phone: string): ContactScope {
  return {
    channel: 'whatsapp',
    address: normalisePhoneNumber(phone) ?? phone,
  };
}

export function toolPermission(p: WhatsAppPermission) {
  return {
    phoneNumber: p.phoneNumber,
    displayName: p.displayName,
    canRead: p.canRead,
    canReply: p.canReply,
    trusted: p.trusted,
  };
}

function clampLimit(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value))
    return WHATSAPP_TOOL_MESSAGES_DEFAULT_LIMIT;
  return Math.min(WHATSAPP_MESSAGES_MAX_LIMIT, Math.max(1, Math.floor(value)));
}
