import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  AssistantPart,
  ModeSwitchBy,
  TokenUsage,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { ChatCache } from './chat-cache';
import { ChatWrites } from './chat-writes';
import { ChatModes } from './chat-modes';
import { ChatsService } from './chats.service';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord } from './schemas/message.schema';
import { encodeParts } from './stored-parts';

/** One message of a call as it stands: written again (same id) whenever it grows. */
export interface CallMessage {
  /** Taken when the words started, so the chat keeps them in the order spoken. */
  id: Types.ObjectId;
  role: 'user' | 'assistant';
  /** The assistant's parts (tool calls, mode switches, spoken text) in order; a user message has none. */
  parts: AssistantPart[];
  /** The owner's words (a user message). */
  text?: string;
  model: string | null;
  usage: TokenUsage | null;
  createdAt: Date;
}

/**
 * A voice call's side of a chat: the chat it talks in, its mode, and its words
 * stored as messages of the shapes typed turns use, with the console told as
 * each one is written.
 */
@Injectable()
export class CallTranscripts {
  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly chatsService: ChatsService,
    private readonly cache: ChatCache,
    private readonly modes: ChatModes,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly chatWrites: ChatWrites,
  ) {}

  /** The owner's chat `chatId`, or 400 when there is none. */
  async ownerChat(chatId: string): Promise<ChatRecord> {
    const chat = await this.cache.chat(chatId);
    if (!chat || (chat.kind ?? 'chat') !== 'chat')
      throw new BadRequestException(`Chat '${chatId}' not found`);
    return chat;
  }

  /** A new chat for a call, under an id chosen beforehand (the call's tools know it while it is written). */
  createChat(id: Types.ObjectId): Promise<ChatRecord> {
    return this.chatsService.createQuietly(id);
  }

  announceCreated(chat: ChatRecord): void {
    this.chatsService.announceCreated(chat._id.toHexString());
  }

  /** Removes a chat made for a call that could not start (it has no messages). */
  async discard(chat: ChatRecord): Promise<void> {
    await this.chatsService.discard(chat._id.toHexString());
  }

  hasMode(mode: string): boolean {
    return this.modes.hasMode(mode);
  }

  modeNames(): string[] {
    return this.modes.names();
  }

  modeOf(chat: ChatRecord): string {
    return this.modes.modeOf(chat);
  }

  /** A switch made in the call (set_mode, select_account, another mode's tool), stored with the chat. */
  async recordMode(
    chat: ChatRecord,
    mode: string,
    accountId: string | null,
    by: ModeSwitchBy = 'model',
  ): Promise<void> {
    await this.modes.recordSwitch(chat, mode, by, accountId);
  }

  /** Writes (or rewrites) one message of the call and tells the console. */
  async write(chat: ChatRecord, message: CallMessage): Promise<void> {
    const now = this.clock.now();
    const content =
      message.role === 'user'
        ? (message.text ?? '')
        : message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
    const fields: Omit<MessageRecord, '_id' | 'createdAt'> = {
      chatId: chat._id,
      role: message.role,
      content,
      ...(message.role === 'assistant'
        ? { parts: encodeParts(message.parts) }
        : {}),
      status: 'complete',
      error: null,
      model: message.model,
      usage: message.usage,
      updatedAt: now,
    };
    await this.messages
      .updateOne(
        { _id: message.id },
        { $set: fields, $setOnInsert: { createdAt: message.createdAt } },
        { upsert: true },
      )
      .exec();
    await this.chatWrites.run(chat._id, () =>
      this.chats
        .updateOne({ _id: chat._id }, { $set: { updatedAt: now } })
        .exec(),
    );
    this.cache.updateChat(chat._id.toHexString(), { updatedAt: now });
    // Words may land out of order (a transcript arrives after the answer to it): the next typed turn reads the history afresh.
    this.cache.forget(chat._id.toHexString());
    this.events.emit('chats.changed', {
      chatId: chat._id.toHexString(),
      change: 'transcript',
      at: now.toISOString(),
    });
  }

  /** An id for words that start now: ids order a chat's messages. */
  nextId(): Types.ObjectId {
    return new Types.ObjectId();
  }
}
