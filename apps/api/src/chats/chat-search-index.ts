import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { AppEventMap } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { StartUpWork } from '../database/start-up-work';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/** Message text kept for search at most (characters); beyond it every search asks the database. */
const MAX_INDEX_CHARS = 16_000_000;
/** The whole index is read again (in the background) after this long, in case a write went by without an event. */
const FULL_REBUILD_MS = 10 * 60_000;
/** How long after a change its chat is read again (changes in between are read together). */
const REFRESH_DELAY_MS = 500;
/** Bits of a chat's trigram filter (a power of two): 512 bytes a chat. */
const TRIGRAM_BITS = 4096;
const TRIGRAM_SHIFT = 32 - Math.log2(TRIGRAM_BITS);

/** One chat's messages as the index keeps them. */
export interface IndexedChat {
  /** Every message, lower-cased, joined by new lines: what a search looks through. */
  text: string;
  /** The messages as written, oldest first: where a snippet is cut from. */
  messages: string[];
  /** Where each message begins in `text`. */
  starts: Uint32Array;
  /**
   * One bit per hashed trigram of `text`: a search text with a trigram whose bit is not set is not in
   * the chat, which spares most chats the scan of their whole text.
   */
  trigrams: Uint32Array;
}

/**
 * The text of every chat's messages, in memory, so that a search (`GET /api/chats?q=`) does not read
 * every message: FerretDB filters anything but `_id` outside SQLite, so a `$regex` over `messages`
 * decodes them all (seconds at 20,000 messages on the small machine). Read once after the server
 * listens (a search before then waits for it); then a chat whose messages changed (`chats.changed`: a
 * reply started or ended, a delivery, a deletion) is read again, by its indexed `chatId`, at once in
 * the background (a search waits for what is under way). Past MAX_INDEX_CHARS it keeps nothing and the
 * database is asked.
 */
@Injectable()
export class ChatSearchIndex
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private texts: Map<string, IndexedChat> | null = null;
  private size = 0;
  private builtAt = 0;
  /** Set when the messages did not fit: no index until then. */
  private tooLargeUntil = 0;
  private readonly stale = new Set<string>();
  /** Chats read again while a full read was under way: read again once it is in. */
  private readonly changedDuringBuild = new Set<string>();
  private building: Promise<Map<string, IndexedChat> | null> | null = null;
  private refreshing: Promise<void> | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  /** Bumped by a restore: a read begun before it keeps nothing. */
  private generation = 0;
  private readonly logger = new Logger(ChatSearchIndex.name);

  constructor(
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly clock: Clock,
    private readonly startUp: StartUpWork,
  ) {}

  onApplicationBootstrap(): void {
    this.startUp.afterListening(
      'read the messages for search (read on the next search)',
      () => this.current(),
    );
  }

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
    // Read soon, once for a burst of changes, so a search rarely has one to wait for.
    if (this.texts && !this.refreshTimer) {
      this.refreshTimer = setTimeout(() => {
        this.refreshTimer = null;
        if (!this.refreshing && this.stale.size)
          this.refreshing = this.refreshStale()
            .catch((error: Error) =>
              this.logger.warn(
                `Could not read a chat for search: ${error.message}`,
              ),
            )
            .finally(() => (this.refreshing = null));
      }, REFRESH_DELAY_MS);
      this.refreshTimer.unref();
    }
  }

  onModuleDestroy(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
  }

  /** A restored backup replaced every message: read them again. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.generation++;
    this.texts = null;
    this.size = 0;
    this.tooLargeUntil = 0;
    this.stale.clear();
    this.current().catch((error: Error) =>
      this.logger.warn(
        `Could not read the restored messages for search (read on the next search): ${error.message}`,
      ),
    );
  }

  /** Ids of the chats with a message holding `needle` (any letter case), or null when there is no index. */
  async chatsMentioning(needle: string): Promise<Set<string> | null> {
    const texts = await this.current();
    if (!texts) return null;
    const lower = needle.toLocaleLowerCase();
    const wanted = trigramBits(lower);
    const found = new Set<string>();
    for (const [chatId, chat] of texts)
      if (holds(chat, lower, wanted)) found.add(chatId);
    return found;
  }

  /**
   * The chat's messages as written, oldest first, from the first one that holds `needle` as `searchSnippet`
   * finds it (any letter case, any whitespace between its words), as of the last `chatsMentioning()`: a
   * snippet is cut from the first of them. Empty when none holds it; null when there is no index (the caller
   * reads the messages from the database).
   */
  messagesFrom(chatId: string, needle: string): readonly string[] | null {
    if (!this.texts) return null;
    const chat = this.texts.get(chatId);
    return chat ? fromFirstHolding(chat, needle) : [];
  }

  private async current(): Promise<Map<string, IndexedChat> | null> {
    const now = this.clock.now().getTime();
    if (now < this.tooLargeUntil) return null;
    if (!this.texts) {
      this.building ??= this.build(now).finally(() => (this.building = null));
      return this.building;
    }
    // An old index answers while it is read again in the background.
    if (now - this.builtAt > FULL_REBUILD_MS && !this.building)
      this.building = this.build(now)
        .catch((error: Error) => {
          this.logger.warn(
            `Could not read the messages for search again: ${error.message}`,
          );
          return null;
        })
        .finally(() => (this.building = null));
    while (this.refreshing) await this.refreshing;
    if (this.stale.size)
      await (this.refreshing = this.refreshStale().finally(
        () => (this.refreshing = null),
      ));
    if (!this.texts) return null;
    return this.size > MAX_INDEX_CHARS ? this.giveUp(now) : this.texts;
  }

  /** Reads the chats marked stale again, one after another, until none is left. */
  private async refreshStale(): Promise<void> {
    for (const chatId of this.stale) {
      this.stale.delete(chatId);
      const texts = this.texts;
      if (!texts) return;
      if (this.building) this.changedDuringBuild.add(chatId);
      await this.refresh(texts, chatId);
    }
  }

  private async build(now: number): Promise<Map<string, IndexedChat> | null> {
    const generation = this.generation;
    // Changes during the read mark their chats again.
    this.stale.clear();
    this.changedDuringBuild.clear();
    const parts = new Map<string, Array<{ id: string; content: string }>>();
    let size = 0;
    const cursor = this.messages
      .find({}, { chatId: 1, content: 1, hiddenWith: 1 })
      .lean<Pick<MessageRecord, '_id' | 'chatId' | 'content' | 'hiddenWith'>>()
      .cursor();
    for await (const message of cursor) {
      // Another version of a message is not what the chat says now.
      if (message.hiddenWith) continue;
      const content = message.content ?? '';
      size += content.length + 1;
      if (size > MAX_INDEX_CHARS) {
        await cursor.close();
        return this.giveUp(now);
      }
      const chatId = message.chatId.toHexString();
      const entry = { id: message._id.toHexString(), content };
      const list = parts.get(chatId);
      if (list) list.push(entry);
      else parts.set(chatId, [entry]);
    }
    const texts = new Map<string, IndexedChat>();
    for (const [chatId, list] of parts) {
      // Oldest first, as a snippet is taken from the first message holding the words.
      list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      texts.set(chatId, indexed(list.map((m) => m.content)));
    }
    if (generation !== this.generation) return texts;
    for (const chatId of this.changedDuringBuild) this.stale.add(chatId);
    this.changedDuringBuild.clear();
    this.texts = texts;
    this.size = size;
    this.builtAt = now;
    return texts;
  }

  /** Reads one chat's messages again (the `chatId` index answers this). */
  private async refresh(
    texts: Map<string, IndexedChat>,
    chatId: string,
  ): Promise<void> {
    if (!Types.ObjectId.isValid(chatId)) return;
    const messages = await this.messages
      .find({ chatId: new Types.ObjectId(chatId), ...ON_PATH }, { content: 1 })
      .sort({ _id: 1 })
      .lean<Pick<MessageRecord, 'content'>[]>()
      .exec();
    if (this.texts !== texts) return;
    this.drop(chatId);
    if (!messages.length) return;
    const chat = indexed(messages.map((m) => m.content ?? ''));
    texts.set(chatId, chat);
    this.size += chat.text.length + 1;
  }

  private drop(chatId: string): void {
    const old = this.texts?.get(chatId);
    if (old === undefined) return;
    this.texts?.delete(chatId);
    this.size -= old.text.length + 1;
  }

  private giveUp(now: number): null {
    this.texts = null;
    this.size = 0;
    this.tooLargeUntil = now + FULL_REBUILD_MS;
    return null;
  }
}

export function indexed(messages: string[]): IndexedChat {
  const lowered = messages.map((m) => m.toLocaleLowerCase());
  const starts = new Uint32Array(lowered.length);
  let at = 0;
  for (let i = 0; i < lowered.length; i++) {
    starts[i] = at;
    at += lowered[i].length + 1;
  }
  const text = lowered.join('\n');
  const trigrams = new Uint32Array(TRIGRAM_BITS / 32);
  for (let i = 0; i + 2 < text.length; i++) {
    const bit = trigramBit(text, i);
    trigrams[bit >>> 5] |= 1 << (bit & 31);
  }
  return { text, messages, starts, trigrams };
}

/** The filter bit of the trigram (three UTF-16 units) at `i` of `text`. */
function trigramBit(text: string, i: number): number {
  return (
    (Math.imul(text.charCodeAt(i), 0x9e3779b1) ^
      Math.imul(text.charCodeAt(i + 1), 0x85ebca77) ^
      Math.imul(text.charCodeAt(i + 2), 0xc2b2ae3d)) >>>
    TRIGRAM_SHIFT
  );
}

/** The filter bits of every trigram of `text`, each once. */
export function trigramBits(text: string): Set<number> {
  const bits = new Set<number>();
  for (let i = 0; i + 2 < text.length; i++) bits.add(trigramBit(text, i));
  return bits;
}

/** Whether the chat's lower-cased text holds `lower` (whose `trigramBits` are `wanted`). */
export function holds(
  chat: IndexedChat,
  lower: string,
  wanted: ReadonlySet<number>,
): boolean {
  // A trigram whose bit is not set is not in the text; a text shorter than three has none to check.
  for (const bit of wanted)
    if ((chat.trigrams[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
  return chat.text.includes(lower);
}

/** The chat's messages from the first one holding `needle` (see `messagesFrom`). */
export function fromFirstHolding(
  chat: IndexedChat,
  needle: string,
): readonly string[] {
  const words = needle.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  // One scan of the chat's lower-cased text; a match across two messages (the joining new line) does not count.
  const pattern = new RegExp(words.map(escapeRegExp).join('\\s+'), 'g');
  const { text, starts, messages } = chat;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const index = messageAt(starts, match.index);
    const end = index + 1 < starts.length ? starts[index + 1] - 1 : text.length;
    if (match.index + match[0].length <= end) return messages.slice(index);
    pattern.lastIndex = match.index + 1;
  }
  return [];
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The message whose text holds position `at` of its chat's `text`. */
function messageAt(starts: Uint32Array, at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle] <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}
