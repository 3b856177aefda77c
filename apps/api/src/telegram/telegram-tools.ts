import { Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Connection } from 'mongoose';
import { z } from 'zod';
import { idArgument, integerArgument } from '../ai-tools/lenient-arguments';
import type { TelegramPermission } from '@metatronos/shared-types';
import {
  AiModeProvider,
  AiToolProvider,
  toolError,
  type AiMode,
  type AiTool,
  type AiToolAvailabilityContext,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import type { ContactScope } from '../actions/tool-turn';
import { FileAccessError } from '../files/contained-file';
import { FileDirs } from '../files/file-dirs';
import { TELEGRAM_MESSAGES_COLLECTION } from './schemas/telegram-message.schema';
import {
  TelegramBotService,
  type StoredTelegramMessage,
} from './telegram-bot.service';
import {
  TelegramPermissionsService,
  checkTelegramChatId,
} from './telegram-permissions.service';

/** Largest file telegram_send_file and telegram_send_voice upload (the seed's 20 MiB). */
export const TELEGRAM_FILE_MAX_BYTES = 20 * 1024 * 1024;

/** Telegram's mode: the tools that act on the bot's chats. */
@AiModeProvider()
@Injectable()
export class TelegramMode implements AiMode {
  readonly name = 'telegram';
  readonly description =
    'Telegram: who may use the bot, reactions, files and voice notes to permitted chats.';
}

/** What a Telegram tool resolves before it acts: the chat and, by default, the message that started the turn. */
interface Target {
  permission: TelegramPermission;
  trigger: StoredTelegramMessage | null;
}

/**
 * What every Telegram tool shares: the bot, the permissions and the target chat.
 * Offered while the bot is connected. Without `chat_id`, a tool acts on the
 * Telegram chat of the current conversation (an auto-reply's chat), replying to
 * the message that started the turn.
 */
@Injectable()
abstract class TelegramTool {
  readonly modes = ['telegram'];

  constructor(
    protected readonly bot: TelegramBotService,
    protected readonly permissions: TelegramPermissionsService,
    @InjectConnection() protected readonly connection: Connection,
  ) {}

  isAvailable(): boolean {
    return this.bot.status === 'connected';
  }

  /** The chat a call names; without chat_id it acts in this conversation's own chat. */
  contactTargets(args: { chat_id?: string }): ContactScope[] | 'all' {
    const given = args.chat_id?.trim();
    return given ? [telegramTarget(given)] : [];
  }

  /** The chat to act on (must allow replies), or a message for the model. */
  protected async target(
    chatId: string | undefined,
    context: AiToolContext,
  ): Promise<Target | string> {
    let permission: TelegramPermission | null;
    if (chatId !== undefined && chatId.trim() !== '') {
      let id: string;
      try {
        id = checkTelegramChatId(chatId.replace(/^tg:/, ''));
      } catch (error) {
        return (error as Error).message;
      }
      permission = await this.permissions.findByChatId(id);
      if (!permission)
        return `No permission for Telegram chat ${id}: the owner has not allowed it`;
    } else {
      permission = context.chatId
        ? await this.permissions.findByConsoleChatId(context.chatId)
        : null;
      if (!permission)
        return 'This conversation is not a Telegram chat: give chat_id';
    }
    if (!permission.canReply)
      return `No reply permission for Telegram chat ${permission.chatId} (${permission.displayName})`;
    const [trigger] = await this.connection
      .collection<StoredTelegramMessage>(TELEGRAM_MESSAGES_COLLECTION)
      .find({ telegramChatId: permission.chatId })
      .sort({ timestamp: -1 })
      .limit(1)
      .toArray();
    return { permission, trigger: trigger ?? null };
  }
}

const REACT_ARGS = z.object({
  emoji: z
    .string()
    .min(1)
    .max(16)
    .describe('One emoji Telegram allows as a reaction, e.g. "👍"'),
  message_id: integerArgument(z.number().int().min(1))
    .optional()
    .describe(
      'Default: the message that started this turn (a number, or digits in a string)',
    ),
  chat_id: idArgument(z.string())
    .optional()
    .describe(
      'Default: this conversation’s Telegram chat (a number or a string)',
    ),
  is_big: z.boolean().optional().describe('A big animated reaction'),
});

/** The seed's telegram_react. */
@AiToolProvider()
@Injectable()
export class TelegramReactTool
  extends TelegramTool
  implements AiTool<typeof REACT_ARGS>
{
  readonly name = 'telegram_react';
  readonly description =
    'React to a Telegram message with an emoji (by default the message you are answering).';
  readonly schema = REACT_ARGS;
  readonly promptLine = 'react to a Telegram message with an emoji.';

  async execute(
    args: z.output<typeof REACT_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    const target = await this.target(args.chat_id, context);
    if (typeof target === 'string') return toolError(target);
    const messageId = args.message_id ?? target.trigger?.messageId;
    if (messageId === undefined)
      return toolError('No message to react to: give message_id');
    await this.bot.react(
      target.permission.chatId,
      messageId,
      args.emoji.trim(),
      args.is_big ?? false,
    );
    return JSON.stringify({
      ok: true,
      chat_id: target.permission.chatId,
      message_id: messageId,
      emoji: args.emoji.trim(),
    });
  }
}

const SEND_FILE_ARGS = z.object({
  path: z
    .string()
    .min(1)
    .describe('A file in file_cache_dir, e.g. "file_cache_dir/report.pdf"'),
  filename: z.string().max(200).optional().describe('Name shown in Telegram'),
  caption: z.string().max(1024).optional(),
  chat_id: idArgument(z.string())
    .optional()
    .describe(
      'Default: this conversation’s Telegram chat (a number or a string)',
    ),
});

const SEND_VOICE_ARGS = z.object({
  path: z.string().min(1).describe('An .ogg (Opus) file in file_cache_dir'),
  chat_id: idArgument(z.string())
    .optional()
    .describe(
      'Default: this conversation’s Telegram chat (a number or a string)',
    ),
  filename: z.string().max(200).optional(),
});

/**
 * Opens a path the model gave for an upload, once and link-safe: in the cache dir,
 * a regular file, at most 20 MiB. The upload then reads this handle only, so a
 * folder swapped for a link after the check can never send another file.
 */
async function uploadable(
  dirs: FileDirs,
  path: string,
): Promise<{ handle: FileHandle; name: string; size: number } | string> {
  const resolved = dirs.resolve(path, { defaultAlias: 'file_cache_dir' });
  if (!resolved.ok) return resolved.error;
  if (resolved.alias !== 'file_cache_dir')
    return 'Only files in file_cache_dir can be sent';
  let handle: FileHandle;
  try {
    handle = await dirs.open(resolved, 'read');
  } catch (error) {
    if (error instanceof FileAccessError)
      return error.reason === 'missing'
        ? `File not found: ${resolved.display}`
        : error.message;
    throw error;
  }
  const { size } = await handle.stat();
  if (size > TELEGRAM_FILE_MAX_BYTES) {
    await handle.close();
    return `${resolved.display} is ${Math.ceil(size / 1024 / 1024)} MiB: at most 20 MiB can be sent`;
  }
  return { handle, name: basename(resolved.relative), size };
}

/** What both upload tools share: the cache-dir file check, the target chat and the answer. */
@Injectable()
abstract class TelegramUploadTool extends TelegramTool {
  readonly timeoutMs = 120_000;

  constructor(
    bot: TelegramBotService,
    permissions: TelegramPermissionsService,
    @InjectConnection() connection: Connection,
    private readonly dirs: FileDirs,
  ) {
    super(bot, permissions, connection);
  }

  protected async upload(
    kind: 'document' | 'voice',
    args: {
      path: string;
      chat_id?: string;
      filename?: string;
      caption?: string;
    },
    context: AiToolContext,
  ): Promise<string> {
    const file = await uploadable(this.dirs, args.path);
    if (typeof file === 'string') return toolError(file);
    const target = await this.target(args.chat_id, context).catch(
      async (error: unknown) => {
        await file.handle.close();
        throw error;
      },
    );
    if (typeof target === 'string') {
      await file.handle.close();
      return toolError(target);
    }
    const filename = args.filename?.trim() || file.name;
    try {
      await this.bot.sendFile(kind, target.permission.chatId, file.handle, {
        filename,
        caption: args.caption,
      });
    } finally {
      await file.handle.close();
    }
    return JSON.stringify({
      ok: true,
      chat_id: target.permission.chatId,
      filename,
      bytes: file.size,
    });
  }
}

/** The seed's telegram_send_file: a document from the cache dir. */
@AiToolProvider()
@Injectable()
export class TelegramSendFileTool
  extends TelegramUploadTool
  implements AiTool<typeof SEND_FILE_ARGS>
{
  readonly name = 'telegram_send_file';
  readonly description =
    'Send a file from file_cache_dir (at most 20 MiB) to a Telegram chat with reply permission.';
  readonly schema = SEND_FILE_ARGS;
  readonly promptLine = 'send a file from file_cache_dir on Telegram.';

  effect(): 'send' {
    return 'send';
  }

  summarize(args: z.output<typeof SEND_FILE_ARGS>): string {
    return `Telegram file ${args.path}${args.filename ? ` as “${args.filename}”` : ''} to ${args.chat_id?.trim() ? `chat ${args.chat_id.trim()}` : "this conversation's chat"}${args.caption ? ` with the caption “${args.caption}”` : ''}`;
  }

  execute(
    args: z.output<typeof SEND_FILE_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    return this.upload('document', args, context);
  }
}

/** The seed's telegram_send_voice: a voice note from the cache dir. */
@AiToolProvider()
@Injectable()
export class TelegramSendVoiceTool
  extends TelegramUploadTool
  implements AiTool<typeof SEND_VOICE_ARGS>
{
  readonly name = 'telegram_send_voice';
  readonly description =
    'Send a voice note (.ogg Opus from file_cache_dir, at most 20 MiB) to a Telegram chat with reply permission.';
  readonly schema = SEND_VOICE_ARGS;
  readonly promptLine = 'send a voice note on Telegram.';

  effect(): 'send' {
    return 'send';
  }

  summarize(args: z.output<typeof SEND_VOICE_ARGS>): string {
    return `Telegram voice note ${args.path} to ${args.chat_id?.trim() ? `chat ${args.chat_id.trim()}` : "this conversation's chat"}`;
  }

  execute(
    args: z.output<typeof SEND_VOICE_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    return this.upload('voice', args, context);
  }
}

const NO_ARGS = z.object({});

/** Who may use the bot, for the owner's turns. */
@AiToolProvider()
@Injectable()
export class TelegramListPermissionsTool
  extends TelegramTool
  implements AiTool<typeof NO_ARGS>
{
  readonly name = 'telegram_list_permissions';
  readonly description =
    'List the Telegram chats the owner allowed (canRead, canReply, trusted).';
  readonly schema = NO_ARGS;
  readonly promptLine = 'list the Telegram chats you may read and answer.';

  override contactTargets(): 'all' {
    return 'all';
  }

  /** Offered once a bot token is saved (connected or not: permissions can be set up before). */
  override isAvailable(context?: AiToolAvailabilityContext): boolean {
    return !!context?.settings.telegramBotToken;
  }

  async execute(): Promise<string> {
    const permissions = await this.permissions.list();
    return JSON.stringify({
      permissions: permissions.map((p) => ({
        chat_id: p.chatId,
        display_name: p.displayName,
        can_read: p.canRead,
        can_reply: p.canReply,
        trusted: p.trusted,
      })),
    });
  }
}

const MANAGE_ARGS = z.object({
  action: z.enum(['add', 'update', 'remove']),
  chat_id: idArgument(z.string()).describe(
    'Telegram chat id, negative for groups (a number or a string)',
  ),
  display_name: z.string().max(100).optional(),
  can_read: z.boolean().optional(),
  can_reply: z.boolean().optional(),
  trusted: z.boolean().optional(),
});

/** Changes a Telegram permission, as the owner asked in this conversation. */
@AiToolProvider()
@Injectable()
export class TelegramManagePermissionTool
  extends TelegramTool
  implements AiTool<typeof MANAGE_ARGS>
{
  readonly name = 'telegram_manage_permission';
  readonly description =
    'Add, update or remove a Telegram chat permission. Only when the owner asks for it.';
  readonly schema = MANAGE_ARGS;
  readonly promptLine =
    'add, change or remove a Telegram chat permission when the owner asks.';
  readonly grantsAccess = true;

  summarize(args: z.output<typeof MANAGE_ARGS>): string {
    const { action, chat_id, ...flags } = args;
    return `Telegram permission ${action} for chat ${chat_id}${Object.keys(flags).length ? `: ${JSON.stringify(flags)}` : ''}`;
  }

  override contactTargets(args: z.output<typeof MANAGE_ARGS>): ContactScope[] {
    return [telegramTarget(args.chat_id)];
  }

  /** Offered once a bot token is saved (connected or not: permissions can be set up before). */
  override isAvailable(context?: AiToolAvailabilityContext): boolean {
    return !!context?.settings.telegramBotToken;
  }

  async execute(args: z.output<typeof MANAGE_ARGS>): Promise<string> {
    let chatId: string;
    try {
      chatId = checkTelegramChatId(args.chat_id.replace(/^tg:/, ''));
    } catch (error) {
      return toolError((error as Error).message);
    }
    const existing = await this.permissions.findByChatId(chatId);
    try {
      if (args.action === 'add') {
        const created = await this.permissions.create(
          {
            chatId,
            displayName: args.display_name ?? '',
            canRead: args.can_read,
            canReply: args.can_reply,
            trusted: args.trusted,
          },
          'ai',
        );
        return JSON.stringify({ success: true, permission: created });
      }
      if (!existing)
        return toolError(`No permission for Telegram chat ${chatId}`);
      if (args.action === 'remove') {
        await this.permissions.remove(existing.id, 'ai');
        return JSON.stringify({ success: true });
      }
      const updated = await this.permissions.update(
        existing.id,
        {
          displayName: args.display_name,
          canRead: args.can_read,
          canReply: args.can_reply,
          trusted: args.trusted,
        },
        'ai',
      );
      return JSON.stringify({ success: true, permission: updated });
    } catch (error) {
      return toolError((error as Error).message);
    }
  }
}

/** A chat id as the contact scope compares it (`tg:` prefix dropped; a spelling that is no chat id stays as given). */
function telegramTarget(chatId: string): ContactScope {
  const bare = chatId.trim().replace(/^tg:/, '');
  let address = bare;
  try {
    address = checkTelegramChatId(bare);
  } catch {
    // Not a chat id: kept as given, so it never matches the contact's own.
  }
  return { channel: 'telegram', address };
}
