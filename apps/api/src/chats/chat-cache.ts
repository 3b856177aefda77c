import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { ChatList } from './chat-list';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/** Chats kept; the least recently used goes first. */
const MAX_CHATS = 500;

interface CachedChat {
  chat: ChatRecord;
  /** The last CHAT_HISTORY_LIMIT messages, oldest first; null until first needed. */
  history: MessageRecord[] | null;
}

/**
 * Recently used chats and their last `CHAT_HISTORY_LIMIT` messages, in memory.
 * Both are read before the first token of every reply, and FerretDB answers a
 * `{ chatId }` query by scanning every message of every chat (only `_id`
 * equality reaches its SQLite index). The chats module is the only writer of
 * `chats` and `messages` (the AI may only read them), and it reports every
 * write here, so the copy cannot drift; writes of a chat document go on to
 * the whole list of chats (ChatList).
 */
@Injectable()
export class ChatCache {
  private readonly chats = new Map<string, CachedChat>();

  constructor(
    @InjectModel(ChatRecord.name) private readonly chatModel: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly list: ChatList,
  ) {}

  /** A restored backup replaced every chat and message: read it again. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.chats.clear();
  }

  /** The chat, or null when it does not exist (or the id is malformed). */
  async chat(chatId: string): Promise<ChatRecord | null> {
    const cached = this.touch(chatId);
    if (cached) return cached.chat;
    if (!Types.ObjectId.isValid(chatId)) return null;
    const chat = await this.chatModel
      .findById(chatId)
      .lean<ChatRecord>()
      .exec();
    if (chat) this.store(chatId, { chat, history: null });
    return chat;
  }

  /** The chat, or 404 `Chat '<id>' not found`. */
  async get(chatId: string): Promise<ChatRecord> {
    const chat = await this.chat(chatId);
    if (!chat) throw new NotFoundException(`Chat '${chatId}' not found`);
    return chat;
  }

  /**
   * The chat's last messages, oldest first. `before`: a message being written
   * at the same time, which a first read from the database must not include.
   */
  async history(
    chat: ChatRecord,
    before?: Types.ObjectId,
  ): Promise<MessageRecord[]> {
    const limit = this.config.llm.historyLimit;
    if (limit === 0) return [];
    const key = chat._id.toHexString();
    const cached = this.touch(key) ?? this.store(key, { chat, history: null });
    // Only the shown path: another version of a message is no part of the conversation the model sees. A chat
    // without versions keeps the plain query (FerretDB pushes its limit down only when it can push the whole filter).
    const read = (shownOnly: boolean) =>
      this.messages
        .find({
          chatId: chat._id,
          ...(before ? { _id: { $lt: before } } : {}),
          ...(shownOnly ? ON_PATH : {}),
        })
        .sort({ _id: -1 })
        .limit(limit)
        .lean<MessageRecord[]>()
        .exec();
    if (!cached.history) {
      let found = await read(chat.forked === true);
      // The chat's mark was lost (a concurrent write of the chat document): hidden versions still stay out.
      if (!chat.forked && found.some((message) => message.hiddenWith))
        found = await read(true);
      cached.history = found.reverse();
    }
    return [...cached.history];
  }

  /**
   * A chat just created: it has no messages yet, so its first reply reads
   * neither the chat nor its history from the database (a full scan of the
   * messages, see above) before the model is called.
   */
  created(chat: ChatRecord): void {
    this.store(chat._id.toHexString(), { chat, history: [] });
    this.list.created(chat);
  }

  /** Messages just written to the chat. */
  append(chatId: Types.ObjectId, ...records: MessageRecord[]): void {
    const history = this.chats.get(chatId.toHexString())?.history;
    if (!history) return;
    history.push(...records);
    const limit = this.config.llm.historyLimit;
    if (history.length > limit) history.splice(0, history.length - limit);
  }

  /** Fields just written to the chat document. */
  updateChat(chatId: string, fields: Partial<ChatRecord>): void {
    const cached = this.chats.get(chatId);
    if (cached) cached.chat = { ...cached.chat, ...fields };
    this.list.updated(chatId, fields);
  }

  /** Drops what is kept of the chat (read again when next needed). */
  forget(chatId: string): void {
    this.chats.delete(chatId);
  }

  /** The chat document was just deleted. */
  deleted(chatId: string): void {
    this.chats.delete(chatId);
    this.list.deleted(chatId);
  }

  private touch(key: string): CachedChat | undefined {
    const cached = this.chats.get(key);
    if (cached) {
      this.chats.delete(key);
      this.chats.set(key, cached);
    }
    return cached;
  }

  private store(key: string, entry: CachedChat): CachedChat {
    this.chats.set(key, entry);
    while (this.chats.size > MAX_CHATS)
      this.chats.delete(this.chats.keys().next().value as string);
    return entry;
  }
}
