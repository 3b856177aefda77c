import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  CONTACT_CHANNELS,
  type ChatMessage,
  type ContactChannel,
  type MessageAttachment,
  type MessageAuthor,
  type TokenUsage,
} from '@metatronos/shared-types';
import { AttachmentsService } from '../attachments/attachments.service';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import type { LlmHistoryMessage } from '../llm/llm-adapter';
import { TurnError } from '../llm/llm-errors';
import { LlmRunner, type TurnRequest } from '../llm/llm-runner';
import type { TurnSource } from '../llm/turn-source';
import { ChatActivity } from './chat-activity';
import { ChatWrites } from './chat-writes';
import { MessageWrites } from './message-writes';
import { ChatModes } from './chat-modes';
import { RunningReplies } from './chats.service';
import { toChatMessage } from './chat-views';
import { ChatCache } from './chat-cache';
import { ChatVersions } from './chat-versions';
import { LiveVoiceCall } from './live-voice-call';
import {
  channelLabel,
  contactChatContext,
  contactToolFilter,
} from './contact-chat';
import { toLlmHistory } from './history';
import {
  TurnRecording,
  type FinishedReply,
  type ReplyEventSink,
} from './turn-recording';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord, ON_PATH } from './schemas/message.schema';
import { TURN_STORED, type StoredTurn } from './stored-turn';
import { TURN_ACCEPTED, type AcceptedTurn } from './accepted-turn';

export type { FinishedReply, ReplyEventSink } from './turn-recording';

export interface ReplyOptions {
  source?: TurnSource;
  model?: string;
  prompt?: TurnRequest['prompt'];
  toolFilter?: TurnRequest['toolFilter'];
  /** Uploaded files to send with the message (each unsent so far); refused with 400 otherwise. */
  attachmentIds?: string[];
  /** Who wrote the message when it is not the owner (an auto-reply's incoming message); stored with it. */
  author?: MessageAuthor;
  /** The owner's turn in a contact's chat: offer the full tool set instead of the contact's restricted one. */
  fullTools?: boolean;
  /** Start the turn in this mode (a job's or the Pulse's own), stored as the chat's mode. */
  mode?: string;
  /** Select this account for the turn (the account a mail-triggered job watches), stored as the chat's. */
  accountId?: string;
  /** What the action policy needs (the job, its act-on-own tools, the turn's initial taint, the contact). */
  policy?: TurnRequest['policy'];
  /** The owner allowed this one reply over the daily and monthly caps. */
  allowOverBudget?: boolean;
  /** A job's own limits: tool rounds, and tokens over all the run's calls. */
  maxToolRounds?: number;
  maxTokens?: number;
}

export interface PreparedReply {
  userMessageId: string;
  assistantMessageId: string;
  /**
   * Runs the turn to its end and resolves to the reply as stored (never
   * rejects); events go to `sink` while it runs (the console's stream).
   */
  run(sink?: ReplyEventSink): Promise<FinishedReply>;
}

const AUTO_TITLE_LENGTH = 60;

interface RunningReply {
  controller: AbortController;
  done: Promise<void>;
}

/** One turn as `execute()` needs it, gathered by `prepare()`. */
interface PreparedTurn {
  chatId: string;
  content: string;
  options: ReplyOptions;
  controller: AbortController;
  userView: ChatMessage;
  assistant: MessageRecord;
  history: LlmHistoryMessage[];
  attached: MessageAttachment[];
  /** Resolves once the user and assistant messages are stored: true, or false when they could not be. */
  stored: Promise<boolean>;
  chat: ChatRecord;
  /** The turn's own write of the chat document (activity time, title), which a mode switch waits for. */
  chatUpdated: Promise<void>;
  /** The mode and account the turn starts with. */
  mode: string;
  accountId: string | null;
}

export interface RegenerateOptions {
  /** Edit and resend: the user message's new text. */
  content?: string;
  fullTools?: boolean;
}

/** What the owner reads while another reply runs in the chat. */
const BUSY =
  'A reply is already running in this chat. Stop it or wait for it to finish.';

/** What the owner reads when a message to edit, regenerate or switch is on a hidden branch. */
const IN_CALL =
  'A voice call is live in this chat: hang up before editing, regenerating or switching versions.';

const NOT_SHOWN =
  'This message is not in the conversation as shown (it is on another version): show that version first.';

/** What the owner reads when the message could not be stored; the model's answer is dropped with it. */
export const MESSAGE_NOT_STORED =
  'Your message could not be saved (the database did not accept it), so it was not answered. Send it again.';

/**
 * Sends a message to a chat and streams the reply: stores the user message
 * before the model is called, stores the reply as it grows, and applies the
 * failure as an assistant message with `status: "error"` (whatever text arrived
 * kept). An edit or a regenerate adds a version and keeps the old one (ChatVersions).
 * One reply at a time per chat.
 */
@Injectable()
export class ChatReplyService
  extends RunningReplies
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(ChatReplyService.name);
  private readonly running = new Map<string, RunningReply>();
  /** Chats whose shown path is being changed (a version or an owner's mode switch); not a running reply (the chat list does not show it busy). */
  private readonly switching = new Set<string>();
  /** Set once the app is closing: replies stopped from now on were stopped by the shutdown. */
  shuttingDown = false;
  /** The turns' writes to their chats (activity time, title), group-committed; the time alone at most once a minute. */
  private readonly activity: ChatActivity;

  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly runner: LlmRunner,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly attachments: AttachmentsService,
    private readonly modes: ChatModes,
    private readonly versions: ChatVersions,
    private readonly liveCall: LiveVoiceCall,
    private readonly emitter: EventEmitter2,
    private readonly chatWrites: ChatWrites,
    private readonly messageWrites: MessageWrites,
  ) {
    super();
    this.activity = new ChatActivity(chatWrites, this.logger);
  }

  /** Replies cut off by a crash or restart would stay "streaming" forever: close them. */
  async onApplicationBootstrap(): Promise<void> {
    // autoIndex is off (see DatabaseModule): plain compound indexes, which FerretDB supports too.
    await Promise.all([
      this.chats.createIndexes(),
      this.messages.createIndexes(),
    ]).catch((error: Error) =>
      this.logger.warn(`Could not create the chat indexes: ${error.message}`),
    );
    await this.messages
      .updateMany(
        { status: 'streaming' },
        {
          $set: {
            status: 'error',
            error: 'This reply was interrupted because the server stopped.',
            updatedAt: this.clock.now(),
          },
        },
      )
      .exec()
      .catch((error: Error) =>
        this.logger.warn(
          `Could not close interrupted replies: ${error.message}`,
        ),
      );
  }

  /** On shutdown every running reply is stopped and stored (status `stopped`) while the database is still there. */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await this.stopAll();
    await this.activity.writeUnsaved();
  }

  /** A restored backup replaced every chat: an activity time not written yet is not written over it. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.activity.forget();
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.running.keys()].map((chatId) => this.stopAndWait(chatId)),
    );
  }

  isRunning(chatId: string): boolean {
    return this.running.has(chatId);
  }

  holdPath(chatId: string): () => void {
    if (this.running.has(chatId))
      throw new ConflictException(
        'A reply is running in this chat: switch the mode once it has finished.',
      );
    if (this.switching.has(chatId))
      throw new ConflictException(
        'This chat is being changed (another version or mode is being shown): try again in a moment.',
      );
    this.switching.add(chatId);
    return () => this.switching.delete(chatId);
  }

  /** A reply runs, or another version is being shown: a new turn or a version change waits (409). */
  private busy(chatId: string): boolean {
    return this.running.has(chatId) || this.switching.has(chatId);
  }

  stop(chatId: string): boolean {
    const reply = this.running.get(chatId);
    if (!reply) return false;
    reply.controller.abort();
    return true;
  }

  async stopAndWait(chatId: string): Promise<boolean> {
    const reply = this.running.get(chatId);
    if (!reply) return false;
    reply.controller.abort();
    await reply.done;
    return true;
  }

  /**
   * Resolves once no reply runs in the chat (at once when none does), or when
   * `signal` aborts. Another reply may start right after: `prepare()` still
   * answers 409 then, so a caller that waits loops.
   */
  async waitForIdle(chatId: string, signal?: AbortSignal): Promise<void> {
    const reply = this.running.get(chatId);
    if (!reply || signal?.aborted) return;
    if (!signal) return reply.done;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done);
      void reply.done.then(done);
    });
  }

  /**
   * Checks everything that can be checked before writing (chat exists, no reply
   * running, a model and key are configured, attachments known and unsent), and
   * throws an HttpException and writes nothing otherwise. Then starts storing the
   * user message and an empty assistant message: `run()` calls the model while
   * that write is under way, and its events may come before the write is done.
   * If the write fails, `run()` ends with an `error` event (MESSAGE_NOT_STORED),
   * no tool has run and nothing of the turn is kept.
   */
  async prepare(
    chatId: string,
    content: string,
    options: ReplyOptions = {},
  ): Promise<PreparedReply> {
    const chat = await this.cache.get(chatId);
    // The model the owner picked for this chat, unless the caller names one.
    if (!options.model && chat.model)
      options = { ...options, model: chat.model };
    if (this.busy(chatId)) throw new ConflictException(BUSY);
    const modelId = await this.modelFor(options);
    const { controller, finish } = this.claimChat(chatId);
    this.accepted(chatId, content, options);
    try {
      const now = this.clock.now();
      const userId = new Types.ObjectId();
      // Linked first (atomically, refusing any already sent); released again if the messages cannot be stored.
      const attached = await this.attachments.claim(
        options.attachmentIds ?? [],
        chat._id,
        userId,
      );
      const user: MessageRecord = {
        _id: userId,
        chatId: chat._id,
        role: 'user',
        content,
        status: 'complete',
        error: null,
        model: null,
        usage: null,
        ...(attached.length ? { attachments: attached } : {}),
        ...(options.author ? { author: { ...options.author } } : {}),
        ...(options.source === 'cron' || options.source === 'pulse'
          ? { trigger: options.source }
          : {}),
        createdAt: now,
        updatedAt: now,
      };
      const assistantId = new Types.ObjectId();
      const assistant: MessageRecord = {
        _id: assistantId,
        chatId: chat._id,
        role: 'assistant',
        content: '',
        parts: [],
        status: 'streaming',
        error: null,
        model: modelId,
        usage: null,
        // The turn's initial marks (a contact's words) go in with the insert: no write of their own at the start.
        ...(options.policy?.taint?.length
          ? { taint: options.policy.taint.map((m) => ({ ...m })) }
          : {}),
        createdAt: now,
        updatedAt: now,
      };
      // The first message names a chat the owner has not named.
      const title = chat.autoTitle ? titleFrom(content) : null;
      // A job or the Pulse starts each run in its own mode; a chat goes on in the mode it was left in.
      const mode =
        options.mode && this.modes.hasMode(options.mode)
          ? options.mode
          : this.modes.modeOf(chat);
      const chatFields: Partial<ChatRecord> = {
        updatedAt: now,
        ...(title ? { title, autoTitle: false } : {}),
        ...(mode !== (chat.mode ?? undefined) ? { mode } : {}),
        ...(options.accountId && options.accountId !== chat.accountId
          ? { accountId: options.accountId }
          : {}),
      };
      // The one write before the model's answer runs while the model is called: under load it waits behind
      // every other writer of the single SQLite file, and the first token need not wait with it. The reply's
      // own writes, its tools and its end wait for it; if it fails the turn is aborted and nothing stays stored.
      // It is sent after this tick's work (see storeMessages), so the model request leaves first.
      const stored = this.storeMessages(
        [user, assistant],
        attached.length > 0,
        controller,
      );
      // The chat's activity time and title follow once the messages are stored; run() waits for them before it ends.
      const chatUpdated = stored.then(async (ok) => {
        if (!ok) return;
        this.cache.updateChat(chatId, chatFields);
        // Through the driver: strings, a boolean and a date, nothing for mongoose to cast on every turn;
        // grouped with other chats' turns starting meanwhile (many contacts' auto-replies at once).
        await this.activity.record(chat._id, chatFields);
        if (title)
          this.events.emit('chats.changed', {
            chatId,
            change: 'renamed',
            at: now.toISOString(),
          });
      });
      const earlier = await this.cache
        .history(chat, user._id)
        .catch(async (error: unknown) => {
          controller.abort();
          if (await stored) {
            await this.forgetMessages([user, assistant]);
            if (attached.length) await this.attachments.release(userId);
          }
          throw error;
        });
      return this.launch({
        chat,
        options,
        controller,
        finish,
        user,
        assistant,
        earlier,
        attached,
        stored,
        chatUpdated,
        mode,
      });
    } catch (error) {
      this.running.delete(chatId);
      finish();
      throw error;
    }
  }

  /**
   * A new version of a shown message, answered anew: with `content`, of the owner's message (`messageId`
   * itself, or the one the reply `messageId` answers), else of the reply `messageId`. The old version stays,
   * with everything shown after it, as a hidden branch (switchVersion brings it back). Checks everything
   * first and writes nothing when it throws (404 unknown chat or message, 400 a user message without
   * `content`, a contact's message, a mode switch, no model; 409 a reply running or the message not shown).
   */
  async prepareRegenerate(
    chatId: string,
    messageId: string,
    options: RegenerateOptions = {},
  ): Promise<PreparedReply> {
    const chat = await this.cache.get(chatId);
    const target = await this.findMessage(chat, messageId);
    if (this.busy(chatId)) throw new ConflictException(BUSY);
    // The call's words would land after the version it started on, in a branch that may be hidden.
    if (this.liveCall.isIn(chatId)) throw new ConflictException(IN_CALL);
    if (target.hiddenWith) throw new ConflictException(NOT_SHOWN);
    const user =
      target.role === 'user'
        ? target
        : await this.messages
            .findOne({
              chatId: chat._id,
              _id: { $lt: target._id },
              role: 'user',
              ...ON_PATH,
            })
            .sort({ _id: -1 })
            .lean<MessageRecord>()
            .exec();
    if (target.role === 'user' && options.content === undefined)
      throw new BadRequestException(
        'content: send the new text of your message to edit it.',
      );
    // The owner's mode switch is kept as an assistant message holding one mode part: an event, not a reply.
    if (
      target.role === 'assistant' &&
      !target.content &&
      (target.parts?.length ?? 0) > 0 &&
      target.parts?.every((part) => part.type === 'mode')
    )
      throw new BadRequestException(
        'This message records a mode switch, not a reply: there is nothing to regenerate.',
      );
    if (!user)
      throw new BadRequestException(
        'This reply answers no message, so there is nothing to send again.',
      );
    if (user.author)
      throw new BadRequestException(
        "This is a contact's message, or a reply to one: only your own messages and the replies to them can be edited or regenerated.",
      );
    const editing = options.content !== undefined;
    const replaced = editing ? user : target;
    const sendOptions: ReplyOptions = { fullTools: options.fullTools };
    const modelId = await this.modelFor(sendOptions);
    // Checked again: the lookups above awaited, and another reply may have started meanwhile.
    if (this.busy(chatId)) throw new ConflictException(BUSY);
    const { controller, finish } = this.claimChat(chatId);
    this.accepted(chatId, options.content ?? user.content, sendOptions);
    try {
      const tree = await this.versions.tree(chat);
      // A switch or an edit while the checks above awaited may have hidden it.
      if (!tree.isShown(replaced._id.toHexString()))
        throw new ConflictException(NOT_SHOWN);
      const now = this.clock.now();
      const turnUser: MessageRecord = editing
        ? editedVersion(user, options.content as string, now)
        : user;
      const assistant: MessageRecord = {
        _id: new Types.ObjectId(),
        chatId: chat._id,
        role: 'assistant',
        content: '',
        parts: [],
        status: 'streaming',
        error: null,
        model: modelId,
        usage: null,
        createdAt: now,
        updatedAt: now,
      };
      const changed = await this.versions
        .fork(
          chat,
          tree,
          replaced._id.toHexString(),
          editing ? [turnUser, assistant] : [assistant],
        )
        .catch((error: Error) => {
          this.logger.error(`Could not store a new version: ${error.message}`);
          throw new ServiceUnavailableException(
            'The new version could not be saved (the database did not accept it); nothing was changed. Try again.',
          );
        });
      this.events.emit('chats.changed', {
        chatId,
        change: 'versions',
        at: now.toISOString(),
        messageIds: changed,
      });
      const current = (await this.cache.chat(chatId)) ?? chat;
      // The history is the shown path before the message being answered.
      const earlier = await this.cache.history(current, turnUser._id);
      this.cache.append(chat._id, turnUser);
      // The first message edited: a title made from it follows the new text (the old words are off the path).
      const retitle =
        editing &&
        tree.parent(user._id.toHexString()) === chatId &&
        current.title === titleFrom(user.content);
      const chatFields: Partial<ChatRecord> = {
        updatedAt: now,
        ...(retitle ? { title: titleFrom(turnUser.content) } : {}),
      };
      this.cache.updateChat(chatId, chatFields);
      // As a new turn's: the time alone at most once a minute, in line with the other writes of the chat.
      const chatUpdated = this.activity
        .record(chat._id, chatFields)
        .then(() => {
          if (retitle)
            this.events.emit('chats.changed', {
              chatId,
              change: 'renamed',
              at: now.toISOString(),
            });
        });
      return this.launch({
        chat: current,
        options: sendOptions,
        controller,
        finish,
        user: turnUser,
        assistant,
        earlier,
        attached: user.attachments ?? [],
        stored: Promise.resolve(true),
        chatUpdated,
        mode: this.modes.modeOf(current),
      });
    } catch (error) {
      // The copy may have lost the exchange above: read again from the database next time.
      this.cache.forget(chatId);
      this.running.delete(chatId);
      finish();
      throw error;
    }
  }

  /**
   * Shows version `n` (1-based) of the message `messageId` (any of its versions) and what followed it when it
   * left the path, hiding the version shown until now with what follows it. 404 unknown chat, message or
   * version; 409 a reply running, or none of the message's versions is on the shown path. Nothing is
   * written when it throws.
   */
  async switchVersion(
    chatId: string,
    messageId: string,
    n: number,
  ): Promise<void> {
    const chat = await this.cache.get(chatId);
    const message = await this.findMessage(chat, messageId);
    const id = message._id.toHexString();
    if (this.busy(chatId)) throw new ConflictException(BUSY);
    if (this.liveCall.isIn(chatId)) throw new ConflictException(IN_CALL);
    this.switching.add(chatId);
    try {
      const tree = await this.versions.tree(chat);
      const versions = tree.versionsOf(id);
      if (n > versions.length)
        throw new NotFoundException(
          versions.length > 1
            ? `This message has versions 1 to ${versions.length}, not ${n}.`
            : `This message has one version, not ${n}.`,
        );
      const current = tree.shownVersion(id);
      if (!current) throw new ConflictException(NOT_SHOWN);
      const target = versions[n - 1];
      if (target === current) return;
      const changed = await this.versions
        .switchTo(chat, tree, current, target)
        .catch((error: Error) => {
          this.logger.error(`Could not switch versions: ${error.message}`);
          throw new ServiceUnavailableException(
            'The version could not be shown (the database did not accept the change). Try again.',
          );
        });
      this.events.emit('chats.changed', {
        chatId,
        change: 'versions',
        at: this.clock.now().toISOString(),
        messageIds: changed,
      });
      if (tree.parent(target) === chatId)
        await this.retitleFirst(chat, current, target).catch((error: Error) =>
          this.logger.warn(`Could not retitle the chat: ${error.message}`),
        );
    } finally {
      this.switching.delete(chatId);
    }
  }

  /** Another version of the first message shown: a title made from the old one follows it. */
  private async retitleFirst(
    chat: ChatRecord,
    fromId: string,
    toId: string,
  ): Promise<void> {
    const [from, to] = await Promise.all(
      [fromId, toId].map((id) =>
        this.messages
          .findById(id, { role: 1, content: 1 })
          .lean<Pick<MessageRecord, 'role' | 'content'>>()
          .exec(),
      ),
    );
    const current = (await this.cache.chat(chat._id.toHexString())) ?? chat;
    if (from?.role !== 'user' || to?.role !== 'user') return;
    if (current.title !== titleFrom(from.content)) return;
    const title = titleFrom(to.content);
    await this.chatWrites.run(chat._id, () =>
      this.chats.collection.updateOne({ _id: chat._id }, { $set: { title } }),
    );
    this.cache.updateChat(chat._id.toHexString(), { title });
    this.events.emit('chats.changed', {
      chatId: chat._id.toHexString(),
      change: 'renamed',
      at: this.clock.now().toISOString(),
    });
  }

  /** A message of the chat, or 404. */
  private async findMessage(
    chat: ChatRecord,
    messageId: string,
  ): Promise<MessageRecord> {
    const found = /^[0-9a-f]{24}$/i.test(messageId)
      ? await this.messages
          .findOne({ _id: new Types.ObjectId(messageId), chatId: chat._id })
          .lean<MessageRecord>()
          .exec()
      : null;
    if (!found)
      throw new NotFoundException(
        `Message '${String(messageId).slice(0, 40)}' not found in this chat`,
      );
    return found;
  }

  /** The model a turn would use, or 400 with the reason none can be used (nothing written). */
  private async modelFor(options: ReplyOptions): Promise<string> {
    try {
      return (await this.runner.resolveModel(options.model)).id;
    } catch (error) {
      if (error instanceof TurnError)
        throw new BadRequestException(error.message);
      throw error;
    }
  }

  /** Marks the chat busy (synchronously, so a second send cannot slip in); `finish` frees it. */
  private claimChat(chatId: string): {
    controller: AbortController;
    finish: () => void;
  } {
    // A version switch that began while the caller awaited: the turn would write into a path being changed.
    if (this.switching.has(chatId)) throw new ConflictException(BUSY);
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.running.set(chatId, { controller, done });
    return { controller, finish };
  }

  /** Tells who prepares the prompt's parts (the memory's recall) that a turn will run: they start now. */
  private accepted(
    chatId: string,
    content: string,
    options: ReplyOptions,
  ): void {
    const turn: AcceptedTurn = {
      chatId,
      source: options.source ?? 'chat',
      content,
      toolsAllowed: options.prompt?.toolsAllowed !== false,
    };
    this.emitter.emit(TURN_ACCEPTED, turn);
  }

  /** Starts the chat's live turn; `run()` executes it and frees the chat at its end. */
  private launch(turn: {
    chat: ChatRecord;
    options: ReplyOptions;
    controller: AbortController;
    finish: () => void;
    user: MessageRecord;
    assistant: MessageRecord;
    earlier: MessageRecord[];
    attached: MessageAttachment[];
    stored: Promise<boolean>;
    chatUpdated: Promise<void>;
    /** The mode the turn starts in. */
    mode: string;
  }): PreparedReply {
    const { chat, options, user, assistant, earlier } = turn;
    const chatId = chat._id.toHexString();
    const messageIds = [user._id.toHexString(), assistant._id.toHexString()];
    let stored: StoredTurn | null = null;
    this.events.emit('chats.changed', {
      chatId,
      change: 'reply-started',
      at: this.clock.now().toISOString(),
      messageIds,
    });
    const userView = toChatMessage(user);
    // The owner writing in a contact's chat: the contact's messages in the history stay untrusted.
    const contactChannel = CONTACT_CHANNELS.find((c) => c === chat.kind);
    const inContactChat =
      contactChannel !== undefined && (options.source ?? 'chat') === 'chat';
    const history = toLlmHistory(earlier, { markContacts: inContactChat });
    const turnOptions = inContactChat
      ? ownerInContactChat(
          options,
          contactName(earlier) ??
            chat.title.replace(/^(WhatsApp|Telegram):\s*/, ''),
          contactChannel ?? 'whatsapp',
          this.clock.now().toISOString(),
        )
      : options;
    return {
      userMessageId: userView.id,
      assistantMessageId: assistant._id.toHexString(),
      run: (sink) =>
        this.execute(
          {
            chatId,
            content: user.content,
            options: turnOptions,
            controller: turn.controller,
            userView,
            assistant,
            history,
            attached: turn.attached,
            stored: turn.stored,
            mode: turn.mode,
            accountId: options.accountId ?? chat.accountId ?? null,
            chat,
            chatUpdated: turn.chatUpdated,
          },
          sink,
        )
          .then(async (reply) => {
            await turn.chatUpdated;
            // Both messages as the database now has them (the reply's end was stored).
            if (reply.messageId)
              stored = {
                chatId,
                messages: [user, { ...assistant, content: reply.text }],
              };
            return reply;
          })
          .finally(() => {
            this.running.delete(chatId);
            turn.finish();
            if (stored) this.emitter.emit(TURN_STORED, stored);
            this.events.emit('chats.changed', {
              chatId,
              change: 'reply-ended',
              at: this.clock.now().toISOString(),
              messageIds,
            });
          }),
    };
  }

  /** Runs a prepared turn: the model's answer is recorded as it arrives, then its end is stored. */
  private async execute(
    turn: PreparedTurn,
    sink: ReplyEventSink | undefined,
  ): Promise<FinishedReply> {
    const recording = new TurnRecording(
      this.messageWrites,
      this.cache,
      this.clock,
      this.logger,
      turn.assistant,
      sink,
      turn.stored,
    );
    recording.emit('message', turn.userView);
    const { usage, failure } = await this.callModel(turn, recording);
    if (!(await turn.stored)) return recording.abandon(MESSAGE_NOT_STORED);
    return recording.finish(failure, usage);
  }

  /**
   * Stores a turn's two messages in one round trip (the cache learns the user
   * message once it is written). Resolves to false, never rejects, when they
   * could not be stored: the turn is aborted, whatever part was written is
   * removed and claimed files are released, so nothing of the turn stays.
   */
  private storeMessages(
    records: MessageRecord[],
    claimedFiles: boolean,
    controller: AbortController,
  ): Promise<boolean> {
    const [user] = records;
    // Nothing waits for the insert's answer before the model call: it is sent once the request's own work is
    // done (the call has left when nothing before it waited on I/O), grouped with the other turns' inserts
    // made meanwhile (MessageWrites). With many turns arriving at once, no first token waits behind their
    // inserts, and twenty turns' messages cost the database two commands, not twenty. What is stored when is
    // unchanged: the insert was never acknowledged before the call left.
    return this.messageWrites.insert(records).then(
      () => {
        this.cache.append(user.chatId, user);
        return true;
      },
      async (error: Error) => {
        this.logger.error(`Could not store a message: ${error.message}`);
        controller.abort();
        await this.forgetMessages(records);
        if (claimedFiles)
          await this.attachments
            .release(user._id as Types.ObjectId)
            .catch((failure: Error) =>
              this.logger.warn(
                `Could not release the files of a message that was not stored: ${failure.message}`,
              ),
            );
        return false;
      },
    );
  }

  /** Removes whatever part of a turn's messages was written. */
  private async forgetMessages(records: MessageRecord[]): Promise<void> {
    await this.messages
      .deleteMany({ _id: { $in: records.map((r) => r._id) } })
      .exec()
      .catch((error: Error) =>
        this.logger.warn(
          `Could not remove the messages of a failed turn: ${error.message}`,
        ),
      );
  }

  /** The runner's turn, with any failure turned into the TurnError the owner reads. */
  private async callModel(
    turn: PreparedTurn,
    recording: TurnRecording,
  ): Promise<{ usage?: TokenUsage; failure: TurnError | null }> {
    try {
      const attachments = turn.attached.length
        ? await this.attachments.forTurn(turn.attached)
        : undefined;
      const outcome = await this.runner.runTurn(
        {
          source: turn.options.source ?? 'chat',
          chatId: turn.chatId,
          messageId: recording.messageId,
          history: turn.history,
          userMessage: turn.content,
          attachments,
          signal: turn.controller.signal,
          stored: turn.stored,
          model: turn.options.model,
          prompt: turn.options.prompt,
          toolFilter: turn.options.toolFilter,
          policy: turn.options.policy,
          mode: turn.mode,
          accountId: turn.accountId,
          allowOverBudget: turn.options.allowOverBudget,
          maxToolRounds: turn.options.maxToolRounds,
          maxTokens: turn.options.maxTokens,
          // FerretDB rewrites the whole document on update: two writes of one chat at once would lose one.
          onModeChange: async ({ mode, accountId }) => {
            await turn.chatUpdated;
            await this.modes.recordSwitch(turn.chat, mode, 'model', accountId);
          },
        },
        recording.listener,
      );
      return { usage: outcome.usage, failure: null };
    } catch (error) {
      if (error instanceof TurnError) return { failure: error };
      this.logger.error(`Reply failed: ${(error as Error).message}`);
      return {
        failure: new TurnError(
          'internal',
          'The reply failed because of an internal error; see the server log.',
        ),
      };
    }
  }
}

/**
 * The owner's turn in a contact's chat: the contact's restricted tool set
 * unless the owner asked for the full one, and a prompt block that says whose
 * messages are whose.
 */
function ownerInContactChat(
  options: ReplyOptions,
  contact: string,
  channel: ContactChannel,
  at: string,
): ReplyOptions {
  const fullTools = options.fullTools === true;
  const extra = [
    options.prompt?.extra,
    contactChatContext(contact, fullTools, channel),
  ].filter((block): block is string => !!block?.trim());
  return {
    ...options,
    toolFilter: fullTools ? options.toolFilter : contactToolFilter,
    prompt: { ...options.prompt, extra: extra.join('\n\n') },
    // The contact's messages are in the turn's history: third-party words the action policy holds the line on.
    policy: {
      ...options.policy,
      taint: [
        ...(options.policy?.taint ?? []),
        {
          by: 'contact-message',
          text: `${channelLabel(channel)} messages from ${contact}`,
          at,
        },
      ],
    },
  };
}

/** The contact of a contact's chat: the latest message they wrote names them. */
function contactName(messages: MessageRecord[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const author = messages[i].author;
    if (author) return author.name;
  }
  return null;
}

/** The owner's message with new text, as a new version of it (the scheduler's mark does not carry over). */
function editedVersion(
  user: MessageRecord,
  content: string,
  now: Date,
): MessageRecord {
  return {
    _id: new Types.ObjectId(),
    chatId: user.chatId,
    role: 'user',
    content,
    status: 'complete',
    error: null,
    model: null,
    usage: null,
    ...(user.attachments?.length ? { attachments: user.attachments } : {}),
    createdAt: now,
    updatedAt: now,
  };
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0].replace(/\s+/g, ' ');
  return line.length > AUTO_TITLE_LENGTH
    ? `${line.slice(0, AUTO_TITLE_LENGTH - 1).trimEnd()}…`
    : line;
}
