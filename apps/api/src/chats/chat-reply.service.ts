import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  AssistantPart,
  MessageAttachment,
  ChatStreamEventMap,
  ChatStreamEventName,
  TokenUsage,
} from '@metatronos/shared-types';
import { AttachmentsService } from '../attachments/attachments.service';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { TurnError } from '../llm/llm-errors';
import { LlmRunner, type TurnRequest } from '../llm/llm-runner';
import type { TurnSource } from '../llm/turn-source';
import { RunningReplies } from './chats.service';
import { toChatMessage } from './chat-views';
import { ChatCache } from './chat-cache';
import { toLlmHistory } from './history';
import { encodeParts } from './stored-parts';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord } from './schemas/message.schema';

/** Receives the reply's events; the SSE controller writes them, cron and Pulse may ignore them. */
export type ReplyEventSink = <K extends ChatStreamEventName>(
  event: K,
  data: ChatStreamEventMap[K],
) => void;

export interface ReplyOptions {
  source?: TurnSource;
  model?: string;
  prompt?: TurnRequest['prompt'];
  toolFilter?: TurnRequest['toolFilter'];
  /** Uploaded files to send with the message (each unsent so far); refused with 400 otherwise. */
  attachmentIds?: string[];
}

export interface PreparedReply {
  userMessageId: string;
  assistantMessageId: string;
  /** Runs the turn to its end (never rejects); events go to `sink` while it runs. */
  run(sink: ReplyEventSink): Promise<void>;
}

/** How often a growing reply is written to the database while text streams. */
const FLUSH_INTERVAL_MS = 250;
const AUTO_TITLE_LENGTH = 60;

interface RunningReply {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Sends a message to a chat and streams the reply: stores the user message
 * before the model is called, stores the reply as it grows, and applies the
 * seed's rule on failure (no text: the empty reply is deleted; some text: kept).
 * One reply at a time per chat.
 */
@Injectable()
export class ChatReplyService
  extends RunningReplies
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(ChatReplyService.name);
  private readonly running = new Map<string, RunningReply>();
  /** Set once the app is closing: replies stopped from now on were stopped by the shutdown. */
  shuttingDown = false;

  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly runner: LlmRunner,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly attachments: AttachmentsService,
  ) {
    super();
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
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.running.keys()].map((chatId) => this.stopAndWait(chatId)),
    );
  }

  isRunning(chatId: string): boolean {
    return this.running.has(chatId);
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
   * Checks everything that can be checked before writing (chat exists, no reply
   * running, a model and key are configured), then stores the user message and
   * an empty assistant message. Throws an HttpException and writes nothing otherwise (attachments
   * that are unknown or already sent are refused with 400).
   */
  async prepare(
    chatId: string,
    content: string,
    options: ReplyOptions = {},
  ): Promise<PreparedReply> {
    const chat = await this.cache.get(chatId);
    if (this.running.has(chatId))
      throw new ConflictException(
        'A reply is already running in this chat. Stop it or wait for it to finish.',
      );
    let modelId: string;
    try {
      modelId = (await this.runner.resolveModel(options.model)).id;
    } catch (error) {
      if (error instanceof TurnError)
        throw new BadRequestException(error.message);
      throw error;
    }

    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    // Registered before the first await below, so a second send cannot slip in.
    this.running.set(chatId, { controller, done });
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
        createdAt: now,
        updatedAt: now,
      };
      // The first message names a chat the owner has not named.
      const title = chat.autoTitle ? titleFrom(content) : null;
      // This sits before the first token: one round trip stores both messages, while the history comes from the cache.
      const [earlier] = await Promise.all([
        this.cache.history(chat, user._id),
        this.messages.collection.insertMany([user, assistant]),
      ]).catch(async (error: unknown) => {
        if (attached.length) await this.attachments.release(userId);
        throw error;
      });
      this.cache.append(chat._id, user);
      // The chat's activity time and title need not hold up the model call; run() waits for them before it ends.
      const chatFields: Partial<ChatRecord> = {
        updatedAt: now,
        ...(title ? { title, autoTitle: false } : {}),
      };
      this.cache.updateChat(chatId, chatFields);
      const chatUpdated = this.chats
        .updateOne({ _id: chat._id }, { $set: chatFields })
        .exec()
        .catch((error: Error) =>
          this.logger.warn(`Could not update the chat: ${error.message}`),
        );
      const at = now.toISOString();
      this.events.emit('chats.changed', {
        chatId,
        change: 'reply-started',
        at,
      });
      if (title)
        this.events.emit('chats.changed', { chatId, change: 'renamed', at });

      const userView = toChatMessage(user);
      return {
        userMessageId: userView.id,
        assistantMessageId: assistantId.toHexString(),
        run: (sink) =>
          this.execute({
            chatId,
            chat,
            content,
            options,
            sink,
            controller,
            userView,
            assistant,
            history: toLlmHistory(earlier),
            attached,
          })
            .then(async () => void (await chatUpdated))
            .finally(() => {
              this.running.delete(chatId);
              finish();
              this.events.emit('chats.changed', {
                chatId,
                change: 'reply-ended',
                at: this.clock.now().toISOString(),
              });
            }),
      };
    } catch (error) {
      this.running.delete(chatId);
      finish();
      throw error;
    }
  }

  private async execute(turn: {
    chatId: string;
    chat: ChatRecord;
    content: string;
    options: ReplyOptions;
    sink: ReplyEventSink;
    controller: AbortController;
    userView: ReturnType<typeof toChatMessage>;
    assistant: MessageRecord;
    history: ReturnType<typeof toLlmHistory>;
    attached: MessageAttachment[];
  }): Promise<void> {
    const { sink } = turn;
    const assistantId = turn.assistant._id;
    const emit: ReplyEventSink = (event, data) => {
      try {
        sink(event, data);
      } catch (error) {
        this.logger.warn(
          `A reply listener failed: ${(error as Error).message}`,
        );
      }
    };
    const messageId = assistantId.toHexString();
    const parts: AssistantPart[] = [];
    let flushTimer: NodeJS.Timeout | null = null;
    let writing: Promise<unknown> = Promise.resolve();

    const snapshot = () => ({
      parts: encodeParts(parts),
      content: textOf(parts),
      updatedAt: this.clock.now(),
    });
    const flush = () => {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      const state = snapshot();
      writing = writing
        .then(() =>
          this.messages.updateOne({ _id: assistantId }, { $set: state }).exec(),
        )
        .catch((error: Error) => {
          this.logger.warn(
            `Could not store the growing reply: ${error.message}`,
          );
        });
    };
    const scheduleFlush = () => {
      flushTimer ??= setTimeout(flush, FLUSH_INTERVAL_MS);
    };

    emit('message', turn.userView);
    let usage: TokenUsage | undefined;
    let failure: TurnError | null = null;
    try {
      const attachments = turn.attached.length
        ? await this.attachments.forTurn(turn.attached)
        : undefined;
      const outcome = await this.runner.runTurn(
        {
          source: turn.options.source ?? 'chat',
          chatId: turn.chatId,
          messageId,
          history: turn.history,
          userMessage: turn.content,
          attachments,
          signal: turn.controller.signal,
          model: turn.options.model,
          prompt: turn.options.prompt,
          toolFilter: turn.options.toolFilter,
        },
        {
          text: (delta) => {
            const last = parts[parts.length - 1];
            if (last?.type === 'text') last.text += delta;
            else parts.push({ type: 'text', text: delta });
            emit('delta', { text: delta });
            scheduleFlush();
          },
          toolCall: (call) => {
            parts.push({
              type: 'tool_call',
              id: call.id,
              name: call.name,
              arguments: call.arguments,
              result: null,
              error: null,
              durationMs: null,
            });
            emit('tool_call', {
              id: call.id,
              name: call.name,
              arguments: call.arguments,
            });
            flush();
          },
          toolResult: (record) => {
            const part = parts.find(
              (p) =>
                p.type === 'tool_call' &&
                p.id === record.id &&
                p.result === null,
            );
            if (part)
              Object.assign(part, {
                result: record.result,
                error: record.error,
                durationMs: record.durationMs,
              });
            emit('tool_result', {
              id: record.id,
              name: record.name,
              result: record.result ?? '',
              durationMs: record.durationMs ?? 0,
              error: record.error,
            });
            flush();
          },
        },
      );
      usage = outcome.usage;
    } catch (error) {
      failure =
        error instanceof TurnError
          ? error
          : new TurnError(
              'internal',
              'The reply failed because of an internal error; see the server log.',
            );
      if (!(error instanceof TurnError))
        this.logger.error(`Reply failed: ${(error as Error).message}`);
    }

    if (flushTimer) clearTimeout(flushTimer);
    await writing;
    const final = snapshot();
    try {
      const store = async (fields: Partial<MessageRecord>) => {
        await this.messages
          .updateOne({ _id: assistantId }, { $set: fields })
          .exec();
        this.cache.append(turn.chat._id, { ...turn.assistant, ...fields });
      };
      if (!failure) {
        await store({ ...final, status: 'complete', usage: usage ?? null });
        emit('done', usage ? { messageId, usage } : { messageId });
      } else if (failure.kind === 'stopped') {
        await store({ ...final, status: 'stopped' });
        emit('done', { messageId, stopped: true });
      } else if (parts.length === 0) {
        // Nothing arrived: an empty reply would only be noise in the chat and the history.
        await this.messages.deleteOne({ _id: assistantId }).exec();
        emit('error', { message: failure.message, messageId: null });
      } else {
        await store({ ...final, status: 'error', error: failure.message });
        emit('error', { message: failure.message, messageId });
      }
    } catch (error) {
      this.logger.error(
        `Could not store the end of a reply: ${(error as Error).message}`,
      );
      emit('error', {
        message: 'The reply could not be saved: the database is unavailable.',
        messageId: null,
      });
    }
  }
}

function textOf(parts: AssistantPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0].replace(/\s+/g, ' ');
  return line.length > AUTO_TITLE_LENGTH
    ? `${line.slice(0, AUTO_TITLE_LENGTH - 1).trimEnd()}…`
    : line;
}
