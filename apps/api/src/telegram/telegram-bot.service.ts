import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Api, GrammyError } from 'grammy';
import type { Message, Update } from 'grammy/types';
import { Readable, Transform } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import { readChunks } from '../files/contained-file';
import type { Connection } from 'mongoose';
import type {
  TelegramStatus,
  TelegramStatusView,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { SettingsService } from '../settings/settings.service';
import type { InboundMessage } from '../channels/contact-auto-reply';
import {
  TELEGRAM_MESSAGES_COLLECTION,
  TELEGRAM_STATE_COLLECTION,
} from './schemas/telegram-message.schema';

/** A Telegram message as stored (`telegram_messages`), before its update is acknowledged. */
export interface StoredTelegramMessage extends InboundMessage {
  /** `<chatId>:<message_id>`, so a redelivered update is stored once. */
  _id: string;
  updateId: number;
  messageId: number;
  /** Telegram's chat id as a string: one serial queue per chat (`chatId` is the console chat). */
  telegramChatId: string;
  chatType: 'private' | 'group' | 'supergroup' | 'channel';
  chatTitle: string | null;
  fromId: string | null;
  fromName: string;
  fromUsername: string | null;
  fromBot: boolean;
  /** A group message that mentions the bot or answers one of its messages. */
  addressed: boolean;
  receivedAt: Date;
  reason?: string | null;
  /** A photo, document or voice note the message carries (downloaded when the turn runs). */
  media?: TelegramMedia | null;
}

/** A file a Telegram message carries. */
export interface TelegramMedia {
  kind: 'photo' | 'document' | 'voice';
  fileId: string;
  fileName: string;
  /** As Telegram reported it, when it did. */
  size: number | null;
}

/** The Bot API serves bots files up to 20 MiB. */
export const TELEGRAM_DOWNLOAD_MAX_BYTES = 20 * 1024 * 1024;

/** What the rest of the app may ask of the bot (auto-reply, tools, REST). */
export abstract class TelegramGateway {
  abstract get status(): TelegramStatus;
  abstract get username(): string | null;
  /** Sends a text (split at Telegram's 4,096 characters); throws an Error with owner-readable words. */
  abstract sendText(
    chatId: string,
    text: string,
    replyToMessageId?: number,
  ): Promise<void>;
}

type GrammySignal = Parameters<Api['getMe']>[0];

const POLL_TIMEOUT_S = 25;
const MAX_TEXT = 4096;
/** Waits between failed polls: 1 s doubling to 60 s. */
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000, 60000];

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * grammY, loaded when a bot token is first configured: it costs start-up time
 * and most owners have no bot. Before it is loaded no error can be one of its.
 */
let grammy: typeof import('grammy') | null = null;

async function loadGrammy(): Promise<typeof import('grammy')> {
  return (grammy ??= await import('grammy'));
}

function isGrammyError(error: unknown): error is GrammyError {
  return grammy !== null && error instanceof grammy.GrammyError;
}

/** Telegram's answer in plain words (never the token). */
export function describeTelegramError(error: unknown): string {
  if (isGrammyError(error)) {
    if (error.error_code === 401 || error.error_code === 404)
      return 'Telegram refused the bot token (401 Unauthorized): copy it again from BotFather.';
    if (error.error_code === 409)
      return 'Another program is reading this bot’s updates (a webhook or a second server): stop it, or revoke the token in BotFather.';
    if (error.error_code === 429)
      return `Telegram asks to slow down (retry after ${error.parameters.retry_after ?? '?'} s).`;
    if (error.error_code === 403)
      return `Telegram refused it: ${error.description.replace(/^Forbidden:\s*/i, '')}.`;
    return `Telegram answered ${error.error_code}: ${error.description}`;
  }
  if (grammy && error instanceof grammy.HttpError)
    return 'The Telegram server cannot be reached (network error): check the connection or the Bot API server address.';
  return (error as Error)?.message ?? String(error);
}

/**
 * The Telegram bot: long polling while a token is saved (started and stopped
 * when the settings change), with backoff on errors and Telegram's
 * `retry_after` honoured. Every update is stored before its offset is
 * acknowledged (the next `getUpdates` carries `offset`), so a crash never loses
 * a message, and a redelivered update is stored once.
 */
@Injectable()
export class TelegramBotService
  extends TelegramGateway
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger('Telegram');
  private current: TelegramStatusView = {
    status: 'disconnected',
    username: null,
    reason: null,
  };
  private api: Api | null = null;
  private botId: number | null = null;
  private loop: { stop: AbortController; done: Promise<void> } | null = null;
  private configured: string | null = null;
  /** `<apiRoot>/file/bot<token>`: where files are downloaded (holds the token: never logged). */
  private fileRoot: string | null = null;
  private readonly unsubscribe: Array<() => void> = [];
  /** Called with each newly stored message (the auto-reply listens). */
  private readonly listeners = new Set<(m: StoredTelegramMessage) => void>();

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {
    super();
  }

  get status(): TelegramStatus {
    return this.current.status;
  }

  get username(): string | null {
    return this.current.username;
  }

  view(): TelegramStatusView {
    return { ...this.current };
  }

  onMessage(listener: (m: StoredTelegramMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private get messages() {
    return this.connection.collection<StoredTelegramMessage>(
      TELEGRAM_MESSAGES_COLLECTION,
    );
  }

  private get state() {
    return this.connection.collection<{ _id: string; offset: number }>(
      TELEGRAM_STATE_COLLECTION,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe.push(
      this.events.on('settings.updated', () => void this.reconfigure()),
    );
    await this.reconfigure();
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    await this.stopLoop();
  }

  /** Starts, restarts or stops polling to match the saved token and API root. */
  async reconfigure(): Promise<void> {
    const { telegramBotToken, telegramApiRoot } = await this.settings.get();
    const lib = telegramBotToken ? await loadGrammy() : null;
    const key = telegramBotToken
      ? `${telegramApiRoot}\n${telegramBotToken}`
      : null;
    if (key === this.configured) return;
    this.configured = key;
    await this.stopLoop();
    this.fileRoot = telegramBotToken
      ? `${telegramApiRoot}/file/bot${telegramBotToken}`
      : null;
    if (!telegramBotToken || !lib) {
      this.api = null;
      this.setStatus({ status: 'disconnected', username: null, reason: null });
      return;
    }
    this.api = new lib.Api(telegramBotToken, {
      apiRoot: telegramApiRoot,
      timeoutSeconds: POLL_TIMEOUT_S + 15,
    });
    const stop = new AbortController();
    const api = this.api;
    this.loop = { stop, done: this.run(api, stop.signal) };
  }

  private async stopLoop(): Promise<void> {
    const loop = this.loop;
    this.loop = null;
    if (!loop) return;
    loop.stop.abort();
    await loop.done;
  }

  private setStatus(next: TelegramStatusView): void {
    const same =
      next.status === this.current.status &&
      next.username === this.current.username &&
      next.reason === this.current.reason;
    this.current = next;
    if (same) return;
    this.events.emit('telegram.status', {
      ...next,
      at: this.clock.now().toISOString(),
    });
  }

  private async run(api: Api, signal: AbortSignal): Promise<void> {
    // grammY's Node build types signals with the abort-controller shim; Node's own works at run time.
    const callSignal = signal as unknown as GrammySignal;
    let failures = 0;
    const backoff = async (error: unknown) => {
      const retryAfter =
        isGrammyError(error) && error.error_code === 429
          ? (error.parameters.retry_after ?? 1) * 1000
          : 0;
      const wait = Math.max(
        retryAfter,
        BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)],
      );
      failures++;
      await sleep(wait, signal);
    };
    this.setStatus({ status: 'connecting', username: null, reason: null });
    while (!signal.aborted) {
      try {
        const me = await api.getMe(callSignal);
        this.botId = me.id;
        // Long polling and a webhook exclude each other: polling wins (updates stay queued).
        await api.deleteWebhook({ drop_pending_updates: false }, callSignal);
        this.setStatus({
          status: 'connected',
          username: me.username ?? null,
          reason: null,
        });
        failures = 0;
        break;
      } catch (error) {
        if (signal.aborted) return;
        this.setStatus({
          status: 'error',
          username: null,
          reason: describeTelegramError(error),
        });
        await backoff(error);
      }
    }
    let offset = (await this.readOffset()) ?? 0;
    while (!signal.aborted) {
      try {
        const updates = await api.getUpdates(
          {
            offset: offset || undefined,
            timeout: POLL_TIMEOUT_S,
            allowed_updates: ['message'],
          },
          callSignal,
        );
        if (updates.length) {
          const stored = await this.store(updates);
          offset = updates[updates.length - 1].update_id + 1;
          // Saved after the messages: the next getUpdates acknowledges them at Telegram.
          await this.saveOffset(offset);
          for (const message of stored)
            for (const listener of this.listeners) listener(message);
        }
        if (this.current.status !== 'connected')
          this.setStatus({
            status: 'connected',
            username: this.current.username,
            reason: null,
          });
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        this.logger.warn(`Polling failed: ${describeTelegramError(error)}`);
        this.setStatus({
          status: 'error',
          username: this.current.username,
          reason: describeTelegramError(error),
        });
        await backoff(error);
      }
    }
  }

  private async readOffset(): Promise<number | null> {
    const doc = await this.state.findOne({ _id: 'poller' });
    return doc?.offset ?? null;
  }

  private async saveOffset(offset: number): Promise<void> {
    await this.state.updateOne(
      { _id: 'poller' },
      { $set: { offset } },
      { upsert: true },
    );
  }

  /** Stores each message once; returns the ones stored now (not redeliveries). */
  private async store(updates: Update[]): Promise<StoredTelegramMessage[]> {
    const stored: StoredTelegramMessage[] = [];
    for (const update of updates) {
      const message = update.message;
      if (!message) continue;
      const doc = this.toStored(update.update_id, message);
      const result = await this.messages.updateOne(
        { _id: doc._id },
        { $setOnInsert: doc },
        { upsert: true },
      );
      if (result.upsertedCount > 0) {
        stored.push(doc);
        this.events.emit('telegram.message', {
          id: doc._id,
          chatId: doc.telegramChatId,
          at: this.clock.now().toISOString(),
        });
      }
    }
    return stored;
  }

  private toStored(updateId: number, message: Message): StoredTelegramMessage {
    const chat = message.chat;
    const from = message.from;
    const text = message.text ?? message.caption ?? '';
    const username = this.current.username;
    const mentions =
      !!username &&
      [...(message.entities ?? []), ...(message.caption_entities ?? [])].some(
        (e) =>
          e.type === 'mention' &&
          text.slice(e.offset, e.offset + e.length).toLowerCase() ===
            `@${username.toLowerCase()}`,
      );
    const repliesToBot =
      this.botId !== null && message.reply_to_message?.from?.id === this.botId;
    const isGroup = chat.type === 'group' || chat.type === 'supergroup';
    const body = isGroup && username ? stripMention(text, username) : text;
    const fromName = from
      ? [from.first_name, from.last_name].filter(Boolean).join(' ')
      : (('title' in chat ? chat.title : null) ?? 'Unknown');
    return {
      _id: `${chat.id}:${message.message_id}`,
      updateId,
      messageId: message.message_id,
      telegramChatId: String(chat.id),
      chatType: chat.type,
      chatTitle: 'title' in chat ? (chat.title ?? null) : null,
      fromId: from ? String(from.id) : null,
      fromName,
      fromUsername: from?.username ?? null,
      fromBot: from?.is_bot ?? false,
      addressed: !isGroup || mentions || repliesToBot,
      body: body || describeNonText(message),
      media: mediaOf(message),
      timestamp: message.date * 1000,
      receivedAt: this.clock.now(),
      processing: 'pending',
      attempts: 0,
    };
  }

  async sendText(
    chatId: string,
    text: string,
    replyToMessageId?: number,
  ): Promise<void> {
    const api = this.connectedApi();
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += MAX_TEXT)
      chunks.push(text.slice(i, i + MAX_TEXT));
    for (const [i, chunk] of chunks.entries()) {
      await this.withRateLimit(() =>
        api.sendMessage(chatId, chunk, {
          ...(i === 0 && replyToMessageId
            ? {
                reply_parameters: {
                  message_id: replyToMessageId,
                  allow_sending_without_reply: true,
                },
              }
            : {}),
        }),
      );
    }
  }

  /** Reacts to a message with one emoji. */
  async react(
    chatId: string,
    messageId: number,
    emoji: string,
    isBig: boolean,
  ): Promise<void> {
    const api = this.connectedApi();
    await this.withRateLimit(() =>
      api.setMessageReaction(
        chatId,
        messageId,
        [{ type: 'emoji', emoji } as never],
        { is_big: isBig },
      ),
    );
  }

  /** Uploads a local file as a document or a voice note. */
  async sendFile(
    kind: 'document' | 'voice',
    chatId: string,
    /** An already-opened file: the upload reads this descriptor, never a path. */
    file: FileHandle,
    options: { filename: string; caption?: string },
  ): Promise<void> {
    const api = this.connectedApi();
    // A connected bot means grammY is loaded.
    const upload = new (await loadGrammy()).InputFile(
      () => readChunks(file),
      options.filename,
    );
    if (kind === 'voice')
      await this.withRateLimit(() => api.sendVoice(chatId, upload));
    else
      await this.withRateLimit(() =>
        api.sendDocument(chatId, upload, {
          ...(options.caption ? { caption: options.caption } : {}),
        }),
      );
  }

  /**
   * Downloads a file a message carries (at most 20 MiB, 60 s). Throws an Error in plain words
   * (never with the token) when Telegram refuses it or it is too large.
   */
  async downloadFile(media: TelegramMedia): Promise<Readable> {
    const api = this.connectedApi();
    if (media.size !== null && media.size > TELEGRAM_DOWNLOAD_MAX_BYTES)
      throw new Error('it is larger than the 20 MiB a bot may download');
    const file = await this.withRateLimit(() => api.getFile(media.fileId));
    if (!file.file_path || !this.fileRoot)
      throw new Error('Telegram did not give a download path for it');
    let response: Response;
    try {
      response = await fetch(`${this.fileRoot}/${file.file_path}`, {
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      throw new Error('the Telegram file server could not be reached');
    }
    if (!response.ok || !response.body)
      throw new Error(`Telegram answered ${response.status} for the file`);
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > TELEGRAM_DOWNLOAD_MAX_BYTES) {
      await response.body.cancel().catch(() => undefined);
      throw new Error('it is larger than the 20 MiB a bot may download');
    }
    let received = 0;
    const capped = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        callback(
          received > TELEGRAM_DOWNLOAD_MAX_BYTES
            ? new Error('it is larger than the 20 MiB a bot may download')
            : null,
          chunk,
        );
      },
    });
    const body = Readable.fromWeb(
      response.body as unknown as Parameters<typeof Readable.fromWeb>[0],
    );
    body.on('error', (error) => capped.destroy(error));
    return body.pipe(capped);
  }

  private connectedApi(): Api {
    if (!this.api || this.current.status !== 'connected')
      throw new Error(
        'Telegram is not connected: save a bot token in Settings first.',
      );
    return this.api;
  }

  /** Calls Telegram, waiting out a 429's `retry_after` (at most 3 tries, 60 s each). */
  async withRateLimit<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const retryAfter =
          isGrammyError(error) && error.error_code === 429
            ? error.parameters.retry_after
            : undefined;
        if (retryAfter === undefined || attempt >= 3 || retryAfter > 60)
          throw new Error(describeTelegramError(error));
        await sleep(retryAfter * 1000, new AbortController().signal);
      }
    }
  }
}

function stripMention(text: string, username: string): string {
  return text
    .replace(new RegExp(`@${username}\\b`, 'gi'), '')
    .replace(/\s+/g, ' ')
    .trim();
}

function mediaOf(message: Message): TelegramMedia | null {
  const largest = message.photo?.at(-1);
  if (largest)
    return {
      kind: 'photo',
      fileId: largest.file_id,
      fileName: `photo-${message.message_id}.jpg`,
      size: largest.file_size ?? null,
    };
  if (message.document)
    return {
      kind: 'document',
      fileId: message.document.file_id,
      fileName: message.document.file_name ?? `document-${message.message_id}`,
      size: message.document.file_size ?? null,
    };
  if (message.voice)
    return {
      kind: 'voice',
      fileId: message.voice.file_id,
      fileName: `voice-${message.chat.id}-${message.message_id}.ogg`,
      size: message.voice.file_size ?? null,
    };
  return null;
}

function describeNonText(message: Message): string {
  if (message.photo) return '[a photo]';
  if (message.voice) return '[a voice message]';
  if (message.document)
    return `[a file: ${message.document.file_name ?? 'unnamed'}]`;
  if (message.sticker)
    return `[a sticker ${message.sticker.emoji ?? ''}]`.trim();
  return '[a message without text]';
}
