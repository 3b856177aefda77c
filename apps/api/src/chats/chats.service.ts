import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  ChatKind,
  ChatMessage,
  ChatSummary,
  MessageDelivery,
  UpdateChatRequest,
} from '@metatronos/shared-types';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { ChatModes } from './chat-modes';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { ChatCache } from './chat-cache';
import { toChatMessage, toChatSummary } from './chat-views';
import { ChatRecord, DEFAULT_CHAT_TITLE } from './schemas/chat.schema';
import { MessageRecord } from './schemas/message.schema';

/** Where running replies are tracked; ChatReplyService implements it. */
export abstract class RunningReplies {
  abstract isRunning(chatId: string): boolean;
  /** Cancels the chat's running reply and resolves once it has ended. */
  abstract stopAndWait(chatId: string): Promise<boolean>;
}

export const DEFAULT_MESSAGES_PAGE = 50;

/** Chats and their stored messages (REST side). */
@Injectable()
export class ChatsService {
  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly running: RunningReplies,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly modes: ChatModes,
  ) {}

  async list(): Promise<ChatSummary[]> {
    const chats = await this.chats
      .find()
      .sort({ updatedAt: -1, _id: -1 })
      .lean<ChatRecord[]>()
      .exec();
    return chats.map((chat) =>
      toChatSummary(chat, this.running.isRunning(chat._id.toHexString())),
    );
  }

  async create(title?: string, kind: ChatKind = 'chat'): Promise<ChatSummary> {
    const now = this.clock.now();
    const named = title?.trim();
    const created = await this.chats.create({
      title: named || DEFAULT_CHAT_TITLE,
      autoTitle: !named,
      kind,
      mode: DEFAULT_MODE,
      accountId: null,
      createdAt: now,
      updatedAt: now,
    });
    const record = created.toObject<ChatRecord>();
    this.cache.created(record);
    const summary = toChatSummary(record, false);
    this.events.emit('chats.changed', {
      chatId: summary.id,
      change: 'created',
      at: now.toISOString(),
    });
    return summary;
  }

  get(chatId: string): Promise<ChatRecord> {
    return this.cache.get(chatId);
  }

  /** `PATCH /api/chats/:id`: a new title and/or the owner's mode switch. */
  async update(
    chatId: string,
    request: UpdateChatRequest,
  ): Promise<ChatSummary> {
    if (request.title === undefined && request.mode === undefined)
      throw new BadRequestException('Send a title or a mode to change.');
    if (request.mode !== undefined && !this.modes.hasMode(request.mode))
      throw new BadRequestException(
        `mode must be one of: ${this.modes.names().join(', ')} (got "${request.mode.slice(0, 32)}")`,
      );
    const chat = await this.get(chatId);
    if (request.mode !== undefined && this.running.isRunning(chatId))
      throw new ConflictException(
        'A reply is running in this chat: switch the mode once it has finished.',
      );
    let summary =
      request.title !== undefined
        ? await this.rename(chatId, request.title)
        : toChatSummary(chat, this.running.isRunning(chatId));
    if (request.mode !== undefined && request.mode !== summary.mode) {
      await this.modes.recordSwitch(chat, request.mode, 'owner');
      summary = toChatSummary(await this.get(chatId), false);
    }
    return summary;
  }

  async rename(chatId: string, title: string): Promise<ChatSummary> {
    await this.get(chatId);
    const now = this.clock.now();
    const chat = await this.chats
      .findByIdAndUpdate(
        chatId,
        { $set: { title: title.trim(), autoTitle: false, updatedAt: now } },
        { new: true },
      )
      .lean<ChatRecord>()
      .exec();
    if (!chat) throw new NotFoundException(`Chat '${chatId}' not found`);
    this.cache.updateChat(chatId, chat);
    this.events.emit('chats.changed', {
      chatId,
      change: 'renamed',
      at: now.toISOString(),
    });
    return toChatSummary(chat, this.running.isRunning(chatId));
  }

  /** Records where an assistant reply went besides the chat (a WhatsApp auto-reply), and tells the console. */
  async setDelivery(
    chatId: string,
    messageId: string,
    delivery: Omit<MessageDelivery, 'at'>,
  ): Promise<void> {
    if (!Types.ObjectId.isValid(messageId)) return;
    const at = this.clock.now().toISOString();
    await this.messages
      .updateOne(
        { _id: new Types.ObjectId(messageId), role: 'assistant' },
        { $set: { delivery: { ...delivery, at } } },
      )
      .exec();
    this.events.emit('chats.changed', { chatId, change: 'delivery', at });
  }

  /** Deletes the chat and every message in it; a running reply is stopped first. */
  async remove(chatId: string): Promise<void> {
    const chat = await this.get(chatId);
    await this.running.stopAndWait(chatId);
    await this.messages.deleteMany({ chatId: chat._id }).exec();
    await this.chats.deleteOne({ _id: chat._id }).exec();
    this.cache.forget(chatId);
    this.events.emit('chats.changed', {
      chatId,
      change: 'deleted',
      at: this.clock.now().toISOString(),
    });
  }

  /** A page of messages, oldest first: the newest `limit` ones, or those just before `before`. */
  async messagesPage(
    chatId: string,
    limit = DEFAULT_MESSAGES_PAGE,
    before?: string,
  ): Promise<ChatMessage[]> {
    const chat = await this.get(chatId);
    const filter: Record<string, unknown> = { chatId: chat._id };
    if (before) filter['_id'] = { $lt: new Types.ObjectId(before) };
    const page = await this.messages
      .find(filter)
      .sort({ _id: -1 })
      .limit(limit)
      .lean<MessageRecord[]>()
      .exec();
    return page.reverse().map(toChatMessage);
  }
}
