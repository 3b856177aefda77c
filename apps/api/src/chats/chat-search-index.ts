import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { AppEventMap } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/** Message text kept for search at most (characters); beyond it every search asks the database. */
const MAX_INDEX_CHARS = 16_000_000;
/** The whole index is read again after this long, in case a write went by without an event. */
const FULL_REBUILD_MS = 10 * 60_000;

/**
 * The text of every chat's messages, lower-cased, in memory, so that a search
 * (`GET /api/chats?q=`) does not read every message: FerretDB filters anything
 * but `_id` outside SQLite, so a `$regex` over `messages` decodes them all
 * (seconds at 20,000 messages on the small machine). Read once on the first
 * search; then a chat whose messages changed (`chats.changed`: a reply started
 * or ended, a delivery, a deletion) is read again, by its indexed `chatId`, on
 * the next search. Past MAX_INDEX_CHARS it keeps nothing and the database is asked.
 */
@Injectable()
export class ChatSearchIndex {
  private texts: Map<string, string> | null = null;
  private size = 0;
  private builtAt = 0;
  /** Set when the messages did not fit: no index until then. */
  private tooLargeUntil = 0;
  private readonly stale = new Set<string>();
  private building: Promise<Map<string, string> | null> | null = null;

  constructor(
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly clock: Clock,
  ) {}

  @OnEvent('chats.changed')
  onChatChanged(event: AppEventMap['chats.changed']): void {
    // A title is not message text; the list reads titles itself.
    if (event.change === 'renamed' || event.change === 'updated') return;
    if (event.change === 'deleted') {
      this.drop(event.chatId);
      this.stale.delete(event.chatId);
      return;
    }
    this.stale.add(event.chatId);
  }

  /** Ids of the chats with a message holding `needle` (any letter case), or null when there is no index. */
  async chatsMentioning(needle: string): Promise<Set<string> | null> {
    const texts = await this.current();
    if (!texts) return null;
    const lower = needle.toLocaleLowerCase();
    const found = new Set<string>();
    for (const [chatId, text] of texts)
      if (text.includes(lower)) found.add(chatId);
    return found;
  }

  private async current(): Promise<Map<string, string> | null> {
    const now = this.clock.now().getTime();
    if (now < this.tooLargeUntil) return null;
    if (!this.texts || now - this.builtAt > FULL_REBUILD_MS) {
      this.building ??= this.build(now).finally(() => (this.building = null));
      return this.building;
    }
    const texts = this.texts;
    for (const chatId of [...this.stale]) {
      this.stale.delete(chatId);
      await this.refresh(texts, chatId);
    }
    return this.size > MAX_INDEX_CHARS ? this.giveUp(now) : texts;
  }

  private async build(now: number): Promise<Map<string, string> | null> {
    // Changes during the read mark their chats again.
    this.stale.clear();
    const parts = new Map<string, string[]>();
    let size = 0;
    const cursor = this.messages
      .find({}, { chatId: 1, content: 1, hiddenWith: 1 })
      .lean<Pick<MessageRecord, 'chatId' | 'content' | 'hiddenWith'>>()
      .cursor();
    for await (const message of cursor) {
      // Another version of a message is not what the chat says now.
      if (message.hiddenWith) continue;
      const text = (message.content ?? '').toLocaleLowerCase();
      size += text.length + 1;
      if (size > MAX_INDEX_CHARS) {
        await cursor.close();
        return this.giveUp(now);
      }
      const chatId = message.chatId.toHexString();
      const list = parts.get(chatId);
      if (list) list.push(text);
      else parts.set(chatId, [text]);
    }
    const texts = new Map<string, string>();
    for (const [chatId, list] of parts) texts.set(chatId, list.join('\n'));
    this.texts = texts;
    this.size = size;
    this.builtAt = now;
    return texts;
  }

  /** Reads one chat's messages again (the `chatId` index answers this). */
  private async refresh(
    texts: Map<string, string>,
    chatId: string,
  ): Promise<void> {
    if (!Types.ObjectId.isValid(chatId)) return;
    const messages = await this.messages
      .find({ chatId: new Types.ObjectId(chatId), ...ON_PATH }, { content: 1 })
      .lean<Pick<MessageRecord, 'content'>[]>()
      .exec();
    this.drop(chatId);
    if (!messages.length) return;
    const text = messages
      .map((m) => (m.content ?? '').toLocaleLowerCase())
      .join('\n');
    texts.set(chatId, text);
    this.size += text.length + 1;
  }

  private drop(chatId: string): void {
    const old = this.texts?.get(chatId);
    if (old === undefined) return;
    this.texts?.delete(chatId);
    this.size -= old.length + 1;
  }

  private giveUp(now: number): null {
    this.texts = null;
    this.size = 0;
    this.tooLargeUntil = now + FULL_REBUILD_MS;
    return null;
  }
}
