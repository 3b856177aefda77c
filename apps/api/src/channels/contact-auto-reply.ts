import { ConflictException, Logger } from '@nestjs/common';
import type { Connection } from 'mongoose';
import type {
  ContactChannel,
  MessageAuthor,
  MessageDelivery,
} from '@metatronos/shared-types';
import type { ChatReplyService } from '../chats/chat-reply.service';
import type { ChatsService } from '../chats/chats.service';
import type { Clock } from '../clock/clock';
import type { AppEventBus } from '../events/app-event-bus';
import type { WhatsAppAutoReplyLimits } from '../config/app-config';
import { audienceOf } from '../system-instruction/prompt-audience';
import { contactToolFilter } from '../chats/contact-chat';
import { ContactReplyLimits } from './contact-reply-limits';
import { ContactTurnSlots, contactsStopController } from './contact-turn-slots';
import { InboundWrites } from './inbound-writes';
import { driverCollection } from '../database/driver-collection';

/**
 * Where the auto-reply stands with a stored inbound message: `pending` until it takes it
 * (`working`), then `done`, `skipped` (not for it), `stale` (too old at start) or `failed`.
 */
export const INBOUND_PROCESSING = [
  'pending',
  'working',
  'done',
  'skipped',
  'stale',
  'failed',
] as const;
export type InboundProcessing = (typeof INBOUND_PROCESSING)[number];

/** A message is claimed by a process that then crashed this many times at most. */
export const MAX_ATTEMPTS = 2;

/** The fields of a stored inbound message the auto-reply reads and writes. */
export interface InboundMessage {
  _id: string;
  body: string;
  /** Milliseconds since the epoch, as the channel reported it. */
  timestamp: number;
  processing: InboundProcessing;
  attempts?: number;
  sendingAt?: Date | null;
  /** The model's answer, kept until it is sent (a restart then sends it without a second turn). */
  replyText?: string | null;
  chatId?: string | null;
  /** The answer's message in the contact's chat: where the console shows whether it went out. */
  replyMessageId?: string | null;
  /** Set when the budget first held the message back: it then waits, however old, until the budget allows. */
  budgetWaitSince?: Date | null;
}

/** The spend check an auto-reply passes before its turn: why unattended work may not run now, or null. */
export interface ContactBudgetGate {
  unattendedRefusal(): Promise<string | null>;
}

/** What the auto-reply needs to know of a contact's permission, on any channel. */
export interface ChannelContact {
  displayName: string;
  canRead: boolean;
  canReply: boolean;
  trusted: boolean;
  chatId: string | null;
  autoReplyPausedUntil: string | null;
}

/**
 * One messaging channel as the auto-reply sees it. WhatsApp and Telegram each
 * implement it; a third channel is one more implementation of this port.
 */
export interface ContactChannelPort<
  Message extends InboundMessage,
  Contact extends ChannelContact,
> {
  readonly channel: ContactChannel;
  /** "WhatsApp", "Telegram": in logs and chat titles. */
  readonly label: string;
  /** The collection the channel stores inbound messages in (before it acknowledges them). */
  readonly collection: string;
  /** The field of a stored message naming its contact (one serial queue per value). */
  readonly contactField: keyof Message & string;
  /** Replies can go out now; otherwise messages wait, `pending`, for the next connection. */
  isConnected(): boolean;
  /** Why a stored message gets no turn at all (own message, an unaddressed group message), or null. */
  skipReason(message: Message): string | null;
  findContact(key: string): Promise<Contact | null>;
  setChatId(key: string, chatId: string): Promise<void>;
  pauseAutoReply(key: string, until: Date): Promise<void>;
  /**
   * Sends the answer; throws an Error with an owner-readable message when the channel refuses it.
   * `settled`: the channel's own bookkeeping of the send still under way (never rejects), which
   * the contact's next message does not wait for and `idle()` does.
   */
  send(
    message: Message,
    text: string,
  ): Promise<void | { settled?: Promise<void> }>;
  /** The "## … Auto-Reply Context" block for the turn. */
  promptContext(contact: Contact, message: Message): string;
  author(contact: Contact, message: Message): MessageAuthor;
  /**
   * The tools a turn for this contact may use, on top of the contact profile
   * (e.g. reacting to the message being answered); omitted: the profile only.
   */
  extraTools?(contact: Contact): ReadonlySet<string>;
  /**
   * What the message carries besides its text (a photo, a document, a voice note): the
   * attachments to send with the turn and the text the model reads. Omitted: the text only.
   */
  inbound?(
    message: Message,
  ): Promise<{ body: string; attachmentIds: string[] }>;
  /** How a contact is named in logs: "Ann (+1555…)". */
  describe(contact: Contact, key: string): string;
}

/** The services the pipeline runs on (owned by the channel's Nest service). */
export interface ContactAutoReplyDeps {
  connection: Connection;
  chats: ChatsService;
  replies: ChatReplyService;
  clock: Clock;
  limits: WhatsAppAutoReplyLimits & { busyChatWaitMs: number };
  /** Holds messages back (stored, `pending`) while the budget refuses unattended work. */
  budget?: ContactBudgetGate;
  /** Announces a message's new state (`channels.inbound`): the console's lists follow it live. */
  events?: Pick<AppEventBus, 'emit'>;
}

interface TurnResult {
  text: string;
  error: string | null;
  stopped: boolean;
  /** The assistant message in the contact's chat (null when the turn could not start). */
  messageId: string | null;
  /** The budget stopped the turn: the message waits for it instead of failing. */
  budget?: boolean;
}

/** The contact a stored message belongs to (its queue key). */
function queueKeyOf<Message extends InboundMessage>(
  doc: Message,
  field: keyof Message & string,
): string {
  return String(doc[field]);
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
 * The auto-reply every channel shares, restart-safe and concurrent:
 * inbound message (stored by the channel before it is acknowledged) →
 * permission check → a restricted turn in the contact's chat → send with a
 * delivery status on the answer.
 *
 * - One serial queue per contact; contacts run in parallel, at most
 *   `limits.concurrentTurns` turns at once (the others wait, unclaimed).
 * - A message is claimed (`pending` → `working`, one atomic update), so it is
 *   handled once across queues and restarts.
 * - At start (and each time the channel connects) `pending` messages are queued
 *   again; older than the stale window they become `stale`. A `working` left
 *   by a crash is retried once if no send had started, else marked `failed`
 *   (the channel may already have delivered it: never answer twice).
 * - Turns get the contact tool profile and, for untrusted contacts, no memory.
 * - Replies are delayed (not dropped) to 1 per contact per interval and N per
 *   minute overall; a contact that keeps the auto-reply busy (a bot loop) is paused.
 */
export class ContactAutoReply<
  Message extends InboundMessage,
  Contact extends ChannelContact,
> {
  private readonly logger: Logger;
  private readonly queues = new Map<string, Promise<void>>();
  private readonly queued = new Set<string>();
  /** A sent reply's last writes (delivery mark, `done`), which its contact's queue does not wait for. */
  private readonly tails = new Set<Promise<void>>();
  private readonly limits: ContactReplyLimits;
  private readonly slots: ContactTurnSlots;
  private readonly writes: InboundWrites;
  private closing = false;
  private readonly stopping = contactsStopController();

  constructor(
    private readonly port: ContactChannelPort<Message, Contact>,
    private readonly deps: ContactAutoReplyDeps,
  ) {
    this.logger = new Logger(`${port.label}AutoReply`);
    this.limits = new ContactReplyLimits(deps.clock, deps.limits);
    this.slots = new ContactTurnSlots(() => deps.limits.concurrentTurns);
    // Through the driver's own collection (and on the embedded database its wire), as a chat turn's writes.
    this.writes = new InboundWrites(() => driverCollection(this.messages));
  }

  /** Turns running now, over all contacts (tests, the bench). */
  get turnsRunning(): number {
    return this.slots.inUse;
  }

  private get messages() {
    return this.deps.connection.collection<InboundMessage>(
      this.port.collection,
    );
  }

  /** Stops taking messages off the queues: what is not claimed yet stays `pending` for the next start. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    await this.idle();
  }

  /** Resolves once every queue is empty (tests, the bench, shutdown). */
  async idle(): Promise<void> {
    while (this.queues.size || this.tails.size)
      await Promise.all([...this.queues.values(), ...this.tails]);
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
        // `reason`: the field the channel page shows ("Failed: …").
        { $set: { processing: 'failed', reason: interrupted } },
      );
      for (const doc of cut)
        if (doc.chatId)
          await this.noteDelivery(
            doc.chatId,
            doc.replyMessageId ?? null,
            'failed',
            `${interrupted} It may or may not have reached ${this.port.label}.`,
          );
      await this.messages.updateMany(
        { processing: 'working', attempts: { $gte: MAX_ATTEMPTS } },
        {
          $set: {
            processing: 'failed',
            reason: 'The server stopped twice while answering this message.',
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

  /** Queues every `pending` message, oldest first (at start and whenever the channel connects). */
  async scan(): Promise<void> {
    if (this.closing) return;
    const field = this.port.contactField;
    try {
      const pending = await this.messages
        .find(
          { processing: 'pending' },
          { projection: { _id: 1, [field]: 1, timestamp: 1 } },
        )
        .sort({ timestamp: 1 })
        .toArray();
      for (const doc of pending)
        this.enqueue(String((doc as Record<string, unknown>)[field]), doc._id);
    } catch (error) {
      this.logger.error(
        `Could not read pending ${this.port.label} messages: ${(error as Error).message}`,
      );
    }
  }

  /** Adds a message to its contact's queue (once while it is queued). */
  enqueue(contactKey: string, messageId: string): void {
    if (this.closing || this.queued.has(messageId)) return;
    this.queued.add(messageId);
    const previous = this.queues.get(contactKey) ?? Promise.resolve();
    const next = previous
      .then(() => this.handle(messageId))
      .catch((error: unknown) =>
        this.logger.error(
          `Auto-reply to ${messageId} failed: ${(error as Error).message}`,
        ),
      )
      .finally(() => {
        this.queued.delete(messageId);
        if (this.queues.get(contactKey) === next)
          this.queues.delete(contactKey);
      });
    this.queues.set(contactKey, next);
  }

  private async handle(messageId: string): Promise<void> {
    // Unclaimed messages stay `pending`: the next start (or connection) picks them up.
    if (this.closing || !this.port.isConnected()) return;
    // The slot is taken before the claim: a message waiting for one is still `pending`.
    const release = await this.slots.acquire(this.stopping.signal);
    try {
      if (this.closing || !this.port.isConnected()) return;
      await this.answer(messageId, release);
    } catch (error) {
      await this.failThrown(messageId, error);
    } finally {
      release();
    }
  }

  /**
   * A claimed message whose handling threw (a database write or a look-up outside
   * the turn, which reports its own failures): marked `failed` with the reason, so
   * it shows on the channel page instead of staying `working` — answered by no one,
   * shown as nothing — until the next start. Not once its send began: whether the
   * contact got it is unknown, and `recover()` settles those.
   */
  private async failThrown(messageId: string, error: unknown): Promise<void> {
    const reason = `The auto-reply could not finish: ${(error as Error | null)?.message ?? String(error)}`;
    this.logger.error(
      `Auto-reply to ${this.port.label} message ${messageId} failed: ${reason}`,
    );
    try {
      const result = await this.messages.updateOne(
        { _id: messageId, processing: 'working', sendingAt: null },
        {
          $set: {
            processing: 'failed',
            reason,
            finishedAt: this.deps.clock.now(),
          },
        },
      );
      if (result.modifiedCount) this.announce(messageId, 'failed');
    } catch (second) {
      this.logger.error(
        `Could not mark the ${this.port.label} message ${messageId} failed: ${(second as Error).message}`,
      );
    }
  }

  /** Claims, answers and sends one message; `endTurn` gives the turn's slot back once the model is done. */
  private async answer(messageId: string, endTurn: () => void): Promise<void> {
    const { clock, limits } = this.deps;
    const doc = (await this.messages.findOneAndUpdate(
      { _id: messageId, processing: 'pending' },
      {
        $set: { processing: 'working', claimedAt: clock.now() },
        $inc: { attempts: 1 },
      },
      { returnDocument: 'after' },
    )) as Message | null;
    if (!doc) return;
    this.announce(doc._id, 'working');
    const key = String(doc[this.port.contactField]);
    const skip = this.port.skipReason(doc);
    if (skip) return this.finish(doc, 'skipped', skip);
    // A message the budget held back is answered however long it waited: it was never dropped.
    if (
      !doc.budgetWaitSince &&
      doc.timestamp < clock.now().getTime() - limits.staleMs
    )
      return this.finish(doc, 'stale');
    const contact = await this.port.findContact(key);
    if (!contact?.canRead)
      return this.finish(doc, 'skipped', 'no read permission');
    if (this.limits.isPaused(contact.autoReplyPausedUntil)) {
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
      const refusal = await this.deps.budget?.unattendedRefusal();
      if (refusal) return this.holdForBudget(doc, refusal);
      chatId = await this.chatFor(key, contact);
      const turn = await this.runTurn(chatId, doc, contact);
      if (turn.stopped && (this.closing || this.deps.replies.shuttingDown))
        return this.release(doc);
      if (turn.budget && turn.error !== null)
        return this.holdForBudget(doc, turn.error);
      if (turn.error !== null)
        return this.finish(doc, 'failed', turn.error, { chatId });
      text = turn.text.trim();
      replyMessageId = turn.messageId;
    }
    // Waiting for the rate limits and sending are no turn: another contact may start one.
    endTurn();
    const delivered = (
      status: MessageDelivery['status'],
      detail: string | null = null,
    ) => this.noteDelivery(chatId, replyMessageId, status, detail);
    // Read again: the owner may have withdrawn canReply while the model was answering.
    const current = await this.port.findContact(key);
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
      await this.writes.set(doc._id, {
        replyText: text,
        chatId,
        replyMessageId,
      });
    };
    await this.waitForRateLimits(key, save);
    // Shutting down while held back by the limits: the next start sends the stored answer.
    if (this.closing) {
      if (!saved) await save();
      return this.release(doc);
    }
    await this.writes.set(doc._id, {
      replyText: text,
      chatId,
      replyMessageId,
      sendingAt: clock.now(),
    });
    let sent: void | { settled?: Promise<void> };
    try {
      sent = await this.port.send(doc, text);
    } catch (error) {
      await delivered('failed', (error as Error).message);
      return this.finish(doc, 'failed', (error as Error).message, {
        chatId,
        sent: false,
      });
    }
    await this.noteReply(key, contact);
    // Sent, and `sendingAt` is stored: the contact's next message need not wait for the bookkeeping
    // (a crash before it is written finds the message `working` with `sendingAt`, never sent twice).
    this.afterwards(
      Promise.all([
        sent?.settled,
        delivered('sent'),
        this.finish(doc, 'done', null, { chatId, sent: true }),
      ]),
      doc._id,
    );
  }

  /** Writes a queue no longer waits for; `idle()` (tests, the bench, shutdown) still does. */
  private afterwards(work: Promise<unknown>, messageId: string): void {
    const tracked: Promise<void> = work
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.error(
            `Could not record the end of the auto-reply to ${messageId}: ${(error as Error).message}`,
          ),
      )
      .finally(() => this.tails.delete(tracked));
    this.tails.add(tracked);
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
      await this.deps.chats.setDelivery(chatId, messageId, {
        channel: this.port.channel,
        status,
        detail,
      });
    } catch (error) {
      this.logger.warn(
        `Could not mark the ${this.port.label} delivery of message ${messageId}: ${(error as Error).message}`,
      );
    }
  }

  /** Gives a claimed message back (nothing was sent): the next start handles it again, not counted as an attempt. */
  private async release(doc: Message): Promise<void> {
    // The claim counted an attempt; this one does not count (the claimed document holds the count).
    await this.writes.set(doc._id, {
      processing: 'pending',
      attempts: Math.max(0, (doc.attempts ?? 1) - 1),
    });
    this.announce(doc._id, 'pending');
  }

  private announce(id: string, processing: InboundProcessing): void {
    this.deps.events?.emit('channels.inbound', {
      channel: this.port.channel,
      id,
      processing,
      at: this.deps.clock.now().toISOString(),
    });
  }

  /**
   * Gives a message back, `pending`, while the budget refuses unattended work: it is
   * taken again (once) when the budget changes (caps raised, pause resumed, a new day).
   */
  private async holdForBudget(doc: Message, reason: string): Promise<void> {
    await this.writes.set(doc._id, {
      processing: 'pending',
      reason,
      budgetWaitSince: doc.budgetWaitSince ?? this.deps.clock.now(),
      attempts: Math.max(0, (doc.attempts ?? 1) - 1),
    });
    this.announce(doc._id, 'pending');
  }

  private async finish(
    doc: Message,
    state: InboundProcessing,
    reason: string | null = null,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    if (state === 'failed')
      this.logger.warn(
        `Auto-reply to ${this.port.label} message ${doc._id} failed: ${reason}`,
      );
    await this.writes.set(doc._id, {
      processing: state,
      reason,
      finishedAt: this.deps.clock.now(),
      ...extra,
    });
    this.announce(doc._id, state);
  }

  /** The contact's chat ("WhatsApp: <name>"): the stored one while it exists, else a new one recorded on the permission. */
  private async chatFor(key: string, contact: Contact): Promise<string> {
    if (contact.chatId) {
      try {
        await this.deps.chats.get(contact.chatId);
        return contact.chatId;
      } catch {
        // Deleted by the owner: make a new one.
      }
    }
    const chat = await this.deps.chats.create(
      `${this.port.label}: ${contact.displayName}`,
      this.port.channel,
    );
    await this.port.setChatId(key, chat.id);
    return chat.id;
  }

  private async runTurn(
    chatId: string,
    doc: Message,
    contact: Contact,
  ): Promise<TurnResult> {
    const { replies, clock, limits } = this.deps;
    const author = this.port.author(contact, doc);
    const options = {
      source: 'auto-reply' as const,
      prompt: {
        extra: this.port.promptContext(contact, doc),
        // Sections declare who sees them: an untrusted contact gets the date and nothing of the owner's.
        audience: audienceOf('auto-reply', contact.trusted),
      },
      toolFilter: this.toolFilter(contact),
      // Stored on the contact's message: the console labels it as theirs, and the owner's turns read it as untrusted.
      author,
      policy: {
        // The contact's words start the turn: it is marked from the first token.
        taint: [
          {
            by: 'contact-message',
            text: `a ${this.port.label} message from ${author.name}`,
            at: clock.now().toISOString(),
          },
        ],
        // A contact's turn acts only in that contact's chat.
        contact: {
          channel: this.port.channel,
          address:
            this.port.channel === 'whatsapp'
              ? (author.phone ?? queueKeyOf(doc, this.port.contactField))
              : (author.telegramChatId ??
                queueKeyOf(doc, this.port.contactField)),
        },
      },
    };
    const inbound = (await this.port.inbound?.(doc)) ?? {
      body: doc.body,
      attachmentIds: [],
    };
    const turnOptions = inbound.attachmentIds.length
      ? { ...options, attachmentIds: inbound.attachmentIds }
      : options;
    const deadline = clock.now().getTime() + limits.busyChatWaitMs;
    let prepared;
    for (;;) {
      try {
        prepared = await replies.prepare(chatId, inbound.body, turnOptions);
        break;
      } catch (error) {
        // The owner is talking in the contact's chat: wait for that reply to end, then try again.
        const left = deadline - clock.now().getTime();
        if (error instanceof ConflictException && left > 0 && !this.closing) {
          const waited = AbortSignal.any([
            this.stopping.signal,
            AbortSignal.timeout(left),
          ]);
          await replies.waitForIdle(chatId, waited);
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
      ...(reply.budgetStopped ? { budget: true } : {}),
    };
  }

  private toolFilter(contact: Contact): (name: string) => boolean {
    const extra = this.port.extraTools?.(contact);
    if (!extra?.size) return contactToolFilter;
    return (name) => contactToolFilter(name) || extra.has(name);
  }

  /**
   * Delays (never drops) a reply: 1 per contact per interval, `perMinute` per
   * minute overall. `beforeWaiting` runs once, before the first wait (if any).
   */
  private async waitForRateLimits(
    key: string,
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
    await pause(this.limits.contactWaitMs(key));
    await pause(this.limits.bookOverallSlot());
  }

  /** Records a sent reply and pauses the contact when replies pile up like a conversation with another bot. */
  private async noteReply(key: string, contact: Contact): Promise<void> {
    const pausedUntil = this.limits.recordReply(key);
    if (!pausedUntil) return;
    const { loopReplies, loopWindowMs, loopPauseMs } = this.deps.limits;
    const who = this.port.describe(contact, key);
    try {
      await this.port.pauseAutoReply(key, pausedUntil);
    } catch (error) {
      this.logger.error(
        `Could not pause the auto-reply for ${who}: ${(error as Error).message}`,
      );
    }
    this.logger.warn(
      `Auto-reply paused for ${who} for ${Math.round(loopPauseMs / 60_000)} min: ${loopReplies} replies within ${Math.round(loopWindowMs / 1000)} s looks like a loop with another bot`,
    );
  }
}
