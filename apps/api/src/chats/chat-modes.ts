import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { ModeSwitchBy } from '@metatronos/shared-types';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { AiToolRegistry } from '../ai-tools/ai-tool-registry';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { ChatCache } from './chat-cache';
import { ChatWrites } from './chat-writes';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord } from './schemas/message.schema';

/** A conversation's mode and selected account (capability gating), stored on its chat. */
@Injectable()
export class ChatModes {
  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly tools: AiToolRegistry,
    private readonly chatWrites: ChatWrites,
  ) {}

  hasMode(mode: string): boolean {
    return this.tools.hasMode(mode);
  }

  names(): string[] {
    return this.tools.modes().map((m) => m.name);
  }

  /** The mode a chat's next turn starts in: its stored mode while that mode exists, else the default. */
  modeOf(chat: ChatRecord): string {
    return chat.mode && this.tools.hasMode(chat.mode)
      ? chat.mode
      : DEFAULT_MODE;
  }

  /**
   * Stores the conversation's new mode (and account) and tells the console. A switch
   * by the owner is also kept in the chat as a small event (a message holding one
   * mode part); the model's switch is a part of the reply that made it.
   */
  async recordSwitch(
    chat: ChatRecord,
    mode: string,
    by: ModeSwitchBy,
    accountId?: string | null,
  ): Promise<void> {
    const chatId = chat._id.toHexString();
    const now = this.clock.now();
    const fields: Partial<ChatRecord> = {
      mode,
      ...(accountId !== undefined ? { accountId } : {}),
    };
    // Through the driver: a string and an id or null, nothing for mongoose to cast (a model's switch is mid-turn).
    await this.chatWrites.run(chat._id, () =>
      this.chats.collection.updateOne({ _id: chat._id }, { $set: fields }),
    );
    this.cache.updateChat(chatId, fields);
    if (by === 'owner') {
      const event: MessageRecord = {
        _id: new Types.ObjectId(),
        chatId: chat._id,
        role: 'assistant',
        content: '',
        parts: [{ type: 'mode', mode, by }],
        status: 'complete',
        error: null,
        model: null,
        usage: null,
        createdAt: now,
        updatedAt: now,
      };
      await this.messages.collection.insertOne(event);
      this.cache.append(chat._id, event);
    }
    this.events.emit('chats.changed', {
      chatId,
      change: 'mode',
      mode,
      at: now.toISOString(),
    });
  }
}
