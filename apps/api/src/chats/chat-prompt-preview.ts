import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { ChatPromptPreview } from '@metatronos/shared-types';
import { CombinedPromptBuilder } from '../system-instruction/combined-prompt.builder';
import { ChatCache } from './chat-cache';
import { ChatModes } from './chat-modes';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/**
 * The system prompt an owner's chat sends next: its mode and account, and the
 * third-party mark its newest reply ended with (issue 31.4), so the owner reads
 * the same words about that mark as the model did.
 */
@Injectable()
export class ChatPromptPreviewer {
  constructor(
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly cache: ChatCache,
    private readonly modes: ChatModes,
    private readonly prompt: CombinedPromptBuilder,
  ) {}

  async preview(chatId: string): Promise<ChatPromptPreview> {
    const chat = await this.cache.get(chatId);
    if ((chat.kind ?? 'chat') !== 'chat')
      throw new BadRequestException(
        "The prompt preview is for your own chats: a job's, Pulse's or a contact's prompt is built when it runs.",
      );
    const last = await this.messages
      .findOne(
        { chatId: chat._id, role: 'assistant', ...ON_PATH },
        { taint: 1 },
      )
      .sort({ _id: -1 })
      .lean<Pick<MessageRecord, 'taint'>>()
      .exec();
    const taint = (last?.taint ?? []).map((m) => ({ ...m }));
    const mode = this.modes.modeOf(chat);
    const prompt = await this.prompt.buildCombinedPrompt({
      source: 'chat',
      mode,
      accountId: chat.accountId ?? null,
      taint,
    });
    return { chatId: String(chat._id), mode, prompt, taint };
  }
}
