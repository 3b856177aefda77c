import {
  ConflictException,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type {
  AppEventMap,
  MessageDelivery,
  WhatsAppPermission,
} from '@metatronos/shared-types';
import { ChatReplyService } from '../../chats/chat-reply.service';
import { ChatsService } from '../../chats/chats.service';
import { Clock } from '../../clock/clock';
import { WhatsAppGateway, phoneDigits } from '../gateway/whatsapp-gateway';
import { WhatsAppPermissionsService } from '../permissions/whatsapp-permissions.service';
import { audienceOf } from '../../system-instruction/prompt-audience';
import { autoReplyContext, autoReplyToolFilter } from './auto-reply-profile';
import { ContactReplyLimits } from './contact-reply-limits';
import { WhatsAppAutoReplySettings } from './whatsapp-auto-reply.settings';
import type { WhatsAppMessageProcessing } from '../gateway/schemas/whatsapp-message.schema';

/** `processing` of a stored message as the auto-reply moves it along (`working` and `failed` are the auto-reply's own). */
export type AutoReplyState = WhatsAppMessageProcessing;

export const WHATSAPP_MESSAGES_COLLECTION = 'whatsapp_messages';
/** A message claimed by a process that then crashed is tried this many times in all. */
export const MAX_ATTEMPTS = 2;

interface StoredMessage {
  _id: string;
  from: string;
  fromName: string | null;
  body: string;
  timestamp: number;
  fromMe: boolean;
  isGroup: boolean;
  phone: string;
  processing: AutoReplyState;
  attempts?: number;
  sendingAt?: Date | null;
  /** The model's answer, kept until it is sent (a restart then sends it without a second turn). */
  replyText?: string | null;
  chatId?: string | null;
  /** The answer's message in the contact's chat: where the console shows whether it went out. */
  replyMessageId?: string | null;
}

interface TurnResult {
  text: string;
  error: string | null;
  stopped: boolean;
  /** The assistant message in the contact's chat (null when the turn could not start). */
  messageId: string | null;
}

/** Waits `ms`, or less when `signal` aborts. */
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
 * The seed's auto-reply, made concurrent and restart-safe: every inbound
 * message from a contact with `canRead` becomes a turn in the contact's chat
 * ("WhatsApp: <name>"), and the answer goes back to the sender when `canReply`.
 *
 * - One serial queue per contact phone; contacts run in parallel.
 * - A message is claimed in `whatsapp_messages` (`pending` → `working`, one
 *   atomic update), so it is handled once across queues and restarts.
 * - At start (and each time WhatsApp connects) `pending` messages are queued
 *   again; older than the stale window they become `stale`. A `working` left
 *   by a crash is retried once if no send had started, else marked `failed`
 *   (WhatsApp may already have delivered it: never answer twice).
 * - Turns get a restricted tool profile and, for untrusted contacts, no memory.
 * - Replies are delayed (not dropped) to 1 per contact per 10 s and 30 per
 *   minute overall; a contact that keeps the auto-reply busy (a bot loop) is paused.
 */
@Injectable()
export class WhatsAppAutoReplyService
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnModuleDestroy
{
  private readonly logger = new Logger('WhatsAppAutoReply');
  private readonly queues = new Map<string, Promise<void>>();
  private readonly queued = new Set<string>();
  private readonly limits: ContactReplyLimits;
  private closing = false;
  private readonly stopping = new AbortController();
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly gateway: WhatsAppGateway,
    private readonly permissions: WhatsAppPermissionsService,
    private readonly chats: ChatsService,
    private readonly replies: ChatReplyService,
    private readonly clock: Clock,
    private readonly emitter: EventEmitter2,
    private readonly settings: WhatsAppAutoReplySettings,
  ) {
    this.limits = new ContactReplyLimits(clock, settings);
  }

  private get messages() {
    return this.connection.collection<StoredMessage>(
      WHATSAPP_MESSAGES_COLLECTION,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    const onMessage = ({ message }: AppEventMap['whatsapp.message']) => {
      if (message.fromMe || message.isGroup) return;
      this.enqueue(phoneDigits(message.from), message.id);
    };
    const onStatus = ({ status }: AppEventMap['whatsapp.status']) => {
      if (status === 'connected') void this.scan();
    };
    this.emitter.on('whatsapp.message', onMessage);
    this.emitter.on('whatsapp.status', onStatus);
    this.unsubscribe.push(
      () => this.emitter.off('whatsapp.message', onMessage),
      () => this.emitter.off('whatsapp.status', onStatus),
    );
    await this.recover();
    if (this.gateway.status === 'connected') await this.scan();
  }

  /** Stops taking messages off the queues: what is not claimed yet stays `pending` for the next start. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    for (const off of this.unsubscribe.splice(0)) off();
    await this.idle();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    await this.idle();
  }

  /** Resolves once every queue is empty (tests, the bench, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size) await Promise.all([...this.queues.values()]);
  }

  /** `working` messages left by a crash: retried once unless a send had started. */
  async recover(): Promise<void> {
    try {
      const interrupted =
        'The server stopped while this reply was being sent; it is not sent again.';
      const cut = await this.messages
        .find(
          { processing: 'working', sendingAt: { $ne: null } },
          { projection: { chatId: 1, replyMessageId: 1 } },
        )
        .toArray();
      await this.messages.updateMany(
        { processing: 'working', sendingAt: { $ne: null } },
        { $set: { processing: 'failed', error: interrupted } },
      );
      for (const doc of cut)
        if (doc.chatId)
          await this.noteDelivery(
            doc.chatId,
            doc.replyMessageId ?? null,
            'failed',
            `${interrupted} It may or may not have reached WhatsApp.`,
          );
      await this.messages.updateMany(
        { processing: 'working', attempts: { $gte: MAX_ATTEMPTS } },
        {
          $set: {
            processing: 'failed',
            error: 'The server stopped twice while answering this message.',
          },
        },
      );
      await this.messages.updateMany(
        { processing: 'working' },
        { $set: { processing: 'pending' } },
      );
    } catch (error) {
      this.logger.error(
        `Could not recover interrupted auto-replies: ${(error as Error).message}`,
      );
    }
  }

  /** Queues every `pending` message, oldest first (at start and whenever WhatsApp connects). */
  async scan(): Promise<void> {
    if (this.closing) return;
    try {
      const pending = await this.messages
        .find(
          { processing: 'pending' },
          { projection: { _id: 1, phone: 1, timestamp: 1 } },
        )
        .sort({ timestamp: 1 })
        .toArray();
      for (const doc of pending) this.enqueue(doc.phone, doc._id);
    } catch (error) {
      this.logger.error(
        `Could not read pending WhatsApp messages: ${(error as Error).message}`,
      );
    }
  }

  /** Adds a message to its contact's queue (once while it is queued). */
  enqueue(phone: string, messageId: string): void {
    if (this.closing || this.queued.has(messageId)) return;
    this.queued.add(messageId);
    const previous = this.queues.get(phone) ?? Promise.resolve();
    const next = previous
      .then(() => this.handle(messageId))
      .catch((error: unknown) =>
        this.logger.error(
          `Auto-reply to ${messageId} failed: ${(error as Error).message}`,
        ),
      )
      .finally(() => {
        this.queued.delete(messageId);
        if (this.queues.get(phone) === next) this.queues.delete(phone);
      });
    this.queues.set(phone, next);
  }

  private async handle(messageId: string): Promise<void> {
    // Unclaimed messages stay `pending`: the next start (or connection) picks them up.
    if (this.closing || this.gateway.status !== 'connected') return;
    const doc = await this.messages.findOneAndUpdate(
      { _id: messageId, processing: 'pending' },
      {
        $set: { processing: 'working', claimedAt: this.clock.now() },
        $inc: { attempts: 1 },
      },
      { returnDocument: 'after' },
    );
    if (!doc) return;
    if (doc.fromMe || doc.isGroup)
      return this.finish(doc, 'skipped', 'own or group message');
    if (doc.timestamp < this.clock.now().getTime() - this.settings.staleMs)
      return this.finish(doc, 'stale');
    const permission = await this.permissions.findByPhone(doc.phone);
    if (!permission?.canRead)
      return this.finish(doc, 'skipped', 'no read permission');
    if (this.limits.isPaused(permission.autoReplyPausedUntil)) {
      return this.finish(
        doc,
        'skipped',
        'auto-reply paused for this contact (bot loop)',
      );
    }

    let chatId: string;
    let text: string;
    let replyMessageId: string | null;
    if (typeof doc.replyText === 'string' && doc.chatId) {
      // Answered before a restart, not sent yet: send that answer, without a second turn.
      chatId = doc.chatId;
      text = doc.replyText;
      replyMessageId = doc.replyMessageId ?? null;
    } else {
      chatId = await this.chatFor(permission);
      const turn = await this.runTurn(chatId, doc, permission);
      if (turn.stopped && (this.closing || this.replies.shuttingDown))
        return this.release(doc);
      if (turn.error !== null)
        return this.finish(doc, 'failed', turn.error, { chatId });
      text = turn.text.trim();
      replyMessageId = turn.messageId;
    }
    const delivered = (
      status: MessageDelivery['status'],
      detail: string | null = null,
    ) => this.noteDelivery(chatId, replyMessageId, status, detail);
    // Read again: the owner may have withdrawn canReply while the model was answering.
    const current = await this.permissions.findByPhone(doc.phone);
    if (!text || !current?.canReply) {
      await delivered(
        'not-sent',
        text ? 'Replies to this contact are off.' : 'The answer was empty.',
      );
      return this.finish(doc, 'done', null, {
        chatId,
        replyText: text,
        replyMessageId,
        sent: false,
      });
    }

    // The answer is stored before any wait, so a restart sends it without a second turn;
    // with no wait it goes in the same write as `sendingAt`.
    let saved = false;
    const save = async () => {
      saved = true;
      await this.messages.updateOne(
        { _id: doc._id },
        { $set: { replyText: text, chatId, replyMessageId } },
      );
    };
    await this.waitForRateLimits(doc.phone, save);
    // Shutting down while held back by the limits: the next start sends the stored answer.
    if (this.closing) {
      if (!saved) await save();
      return this.release(doc);
    }
    await this.messages.updateOne(
      { _id: doc._id },
      {
        $set: {
          replyText: text,
          chatId,
          replyMessageId,
          sendingAt: this.clock.now(),
        },
      },
    );
    try {
      await this.gateway.sendText(doc.phone, text);
    } catch (error) {
      await delivered('failed', (error as Error).message);
      return this.finish(doc, 'failed', (error as Error).message, {
        chatId,
        sent: false,
      });
    }
    await delivered('sent');
    await this.noteReply(doc.phone, permission.displayName);
    await this.finish(doc, 'done', null, { chatId, sent: true });
  }

  /** Marks the answer in the contact's chat as sent or not; a failure here only loses that mark. */
  private async noteDelivery(
    chatId: string,
    messageId: string | null,
    status: MessageDelivery['status'],
    detail: string | null,
  ): Promise<void> {
    if (!messageId) return;
    try {
      await this.chats.setDelivery(chatId, messageId, {
        channel: 'whatsapp',
        status,
        detail,
      });
    } catch (error) {
      this.logger.warn(
        `Could not mark the WhatsApp delivery of message ${messageId}: ${(error as Error).message}`,
      );
    }
  }

  /** Gives a claimed message back (nothing was sent): the next start handles it again, not counted as an attempt. */
  private async release(doc: StoredMessage): Promise<void> {
    await this.messages.updateOne(
      { _id: doc._id },
      { $set: { processing: 'pending' }, $inc: { attempts: -1 } },
    );
  }

  private async finish(
    doc: StoredMessage,
    state: AutoReplyState,
    reason: string | null = null,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    if (state === 'failed')
      this.logger.warn(
        `Auto-reply to WhatsApp message ${doc._id} failed: ${reason}`,
      );
    await this.messages.updateOne(
      { _id: doc._id },
      {
        $set: {
          processing: state,
          reason,
          finishedAt: this.clock.now(),
          ...extra,
        },
      },
    );
  }

  /** The contact's chat ("WhatsApp: <name>"): the stored one while it exists, else a new one recorded on the permission. */
  private async chatFor(permission: WhatsAppPermission): Promise<string> {
    if (permission.chatId) {
      try {
        await this.chats.get(permission.chatId);
        return permission.chatId;
      } catch {
        // Deleted by the owner: make a new one.
      }
    }
    const chat = await this.chats.create(
      `WhatsApp: ${permission.displayName}`,
      'whatsapp',
    );
    await this.permissions.setChatId(permission.phoneNumber, chat.id);
    return chat.id;
  }

  private async runTurn(
    chatId: string,
    doc: StoredMessage,
    permission: WhatsAppPermission,
  ): Promise<TurnResult> {
    const options = {
      source: 'auto-reply' as const,
      prompt: {
        extra: autoReplyContext(permission),
        // Sections declare who sees them: an untrusted contact gets the date and nothing of the owner's.
        audience: audienceOf('auto-reply', permission.trusted),
      },
      toolFilter: autoReplyToolFilter,
      // Stored on the contact's message: the console labels it as theirs, and the owner's turns read it as untrusted.
      author: {
        kind: 'contact' as const,
        channel: 'whatsapp' as const,
        name: permission.displayName,
        phone: permission.phoneNumber,
      },
    };
    const deadline = this.clock.now().getTime() + this.settings.busyChatWaitMs;
    let prepared;
    for (;;) {
      try {
        prepared = await this.replies.prepare(chatId, doc.body, options);
        break;
      } catch (error) {
        // The owner is talking in the contact's chat: wait for that reply to end, then try again.
        const left = deadline - this.clock.now().getTime();
        if (error instanceof ConflictException && left > 0 && !this.closing) {
          const waited = AbortSignal.any([
            this.stopping.signal,
            AbortSignal.timeout(left),
          ]);
          await this.replies.waitForIdle(chatId, waited);
          if (!waited.aborted) continue;
        }
        return {
          text: '',
          error: (error as Error).message,
          stopped: false,
          messageId: null,
        };
      }
    }
    const reply = await prepared.run();
    const stopped = reply.status === 'stopped';
    return {
      text: reply.text,
      error:
        stopped && !this.closing
          ? 'The reply was stopped before it finished.'
          : reply.error,
      stopped,
      messageId: reply.messageId,
    };
  }

  /**
   * Delays (never drops) a reply: 1 per contact per interval, `perMinute` per
   * minute overall. `beforeWaiting` runs once, before the first wait (if any).
   */
  private async waitForRateLimits(
    phone: string,
    beforeWaiting: () => Promise<void>,
  ): Promise<void> {
    let prepared = false;
    const pause = async (ms: number) => {
      if (ms <= 0 || this.closing) return;
      if (!prepared) {
        prepared = true;
        await beforeWaiting();
      }
      await sleep(ms, this.stopping.signal);
    };
    await pause(this.limits.contactWaitMs(phone));
    await pause(this.limits.bookOverallSlot());
  }

  /** Records a sent reply and pauses the contact when replies pile up like a conversation with another bot. */
  private async noteReply(phone: string, name: string): Promise<void> {
    const pausedUntil = this.limits.recordReply(phone);
    if (!pausedUntil) return;
    const { loopReplies, loopWindowMs, loopPauseMs } = this.settings;
    try {
      await this.permissions.pauseAutoReply(phone, pausedUntil);
    } catch (error) {
      this.logger.error(
        `Could not pause the auto-reply for ${name} (+${phone}): ${(error as Error).message}`,
      );
    }
    this.logger.warn(
      `Auto-reply paused for ${name} (+${phone}) for ${Math.round(loopPauseMs / 60_000)} min: ${loopReplies} replies within ${Math.round(loopWindowMs / 1000)} s looks like a loop with another bot`,
    );
  }
}
