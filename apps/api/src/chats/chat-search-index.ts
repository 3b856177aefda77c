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
import { TURN_STORED, type StoredTurn } from './stored-turn';

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
  /** Each message's id (hex), oldest first: a finished turn replaces its own. */
  ids: string[];
  /** Where each message begins in `text`. */
  starts: Uint32Array;
  /**
   * One bit per hashed trigram of `text`: a search text with a trigram whose bit is not set is not in
   * the chat, which spares most chats the scan of their whole text.
   */
  trigrams: Uint32Array;
  /**
   * Where (ascending positions of `text`) a message as written has another UTF-16 unit than lower-cased,
   * and that unit (`casedUnits`): with `text`, the messages as written, a snippet's source, without
   * keeping every message's text a second time (most of a message is already lower-case).
   */
  casedAt: Uint32Array;
  casedUnits: Uint16Array;
  /**
   * The messages (by their index) kept as written instead: lower-casing changed their length (as 'İ'
   * does), so positions in `text` do not map to them, or so much of them changed case that the marks
   * would take more room than the text. Null when there is none.
   */
  written: ReadonlyMap<number, string> | null;
}

/**
 * The text of every chat's messages, in memory, so that a search (`GET /api/chats?q=`) does not read
 * every message: FerretDB filters anything but `_id` outside SQLite, so a `$regex` over `messages`
 * decodes them all (seconds at 20,000 messages on the small machine). Read once after the server
 * listens (a search before then waits for it). A finished reply's two messages come with the turn
 * (`chats.turn-stored`, just before its `reply-ended`) and are put without a read; a chat whose
 * messages changed otherwise (versions switched, a voice call's words, a reply that stored nothing, a
 * change during a full read) is read again, by its indexed `chatId`, soon in the background (a search
 * waits for what is under way). A reply under way is read only by a search made before it ends. Past
 * MAX_INDEX_CHARS it keeps nothing and the database is asked. Each message's text is kept once,
 * lower-cased (what a search scans), with marks where it was written in another case: a snippet is cut
 * from the message as written, put back from them (no read: FerretDB scans every message for an
 * `_id: {$in}`, and the page's 50 look-ups by `_id` took 37–57 ms).
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
  /** Chats with a reply under way: read by a search made before it ends, else put from its turn. */
  private readonly replying = new Set<string>();
  /** A finished turn's messages (TURN_STORED), taken by the `reply-ended` that follows it. */
  private readonly handed = new Map<string, StoredTurn['messages']>();
  /** The chat being read again now: a turn handed meanwhile could be overwritten by the older read. */
  private reading: string | null = null;
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

  @OnEvent(TURN_STORED)
  onTurnStored(turn: StoredTurn): void {
    this.handed.set(turn.chatId, turn.messages);
  }

  @OnEvent('chats.changed')
  onChatChanged(event: AppEventMap['chats.changed']): void {
    const { chatId, change } = event;
    // A title is not message text (the list reads titles itself); a delivery changes no text; a mode
    // switch stores at most a message without text; a new chat's messages come with their own events.
    if (
      change === 'created' ||
      change === 'renamed' ||
      change === 'updated' ||
      change === 'delivery' ||
      change === 'mode'
    )
      return;
    if (change === 'deleted') {
      this.drop(chatId);
      this.stale.delete(chatId);
      this.replying.delete(chatId);
      this.handed.delete(chatId);
      return;
    }
    if (change === 'reply-started') {
      this.replying.add(chatId);
      return;
    }
    if (change === 'reply-ended') {
      this.replying.delete(chatId);
      const handed = this.handed.get(chatId);
      this.handed.delete(chatId);
      if (handed && this.put(chatId, handed)) return;
    }
    this.markStale(chatId);
  }

  /** Reads the chat again soon, once for a burst of changes, so a search rarely has one to wait for. */
  private markStale(chatId: string): void {
    this.stale.add(chatId);
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

  /**
   * Puts a finished turn's messages as stored (a new one after the chat's last, one already there in
   * its place; a hidden version left out); false when the chat must be read instead: no index yet, a
   * full read or a read of this chat under way (its answer could be older than the turn), or a change
   * not yet read (the read brings the turn too).
   */
  private put(chatId: string, turn: StoredTurn['messages']): boolean {
    const texts = this.texts;
    if (!texts || this.building || this.reading === chatId) return false;
    if (this.stale.has(chatId)) return true;
    const old = texts.get(chatId);
    const fresh = newAtEnd(old, turn);
    if (fresh) {
      // A reply's usual end: no copy of the chat's message list to place them, no search for their ids.
      this.drop(chatId);
      const chat = old
        ? appended(old, old.ids.concat(fresh.ids), fresh.texts)
        : indexed(fresh.texts, fresh.ids);
      texts.set(chatId, chat);
      this.size += chat.text.length + 1;
      return true;
    }
    const ids = old ? [...old.ids] : [];
    // A message of the entry by its index there (taken back out of it only if the chat is indexed anew),
    // or the turn's text.
    const messages: Array<number | string> = old
      ? old.ids.map((_, i) => i)
      : [];
    let appendedOnly = true;
    for (const message of turn) {
      const id = String(message._id);
      const at = ids.indexOf(id);
      if (message.hiddenWith) {
        if (at >= 0) {
          ids.splice(at, 1);
          messages.splice(at, 1);
          appendedOnly = false;
        }
        continue;
      }
      const content = message.content ?? '';
      if (at >= 0) {
        messages[at] = content;
        appendedOnly = false;
        continue;
      }
      // Ids order a chat's messages; a turn's are normally the newest.
      let to = ids.length;
      while (to > 0 && ids[to - 1] > id) to--;
      if (to < ids.length) appendedOnly = false;
      ids.splice(to, 0, id);
      messages.splice(to, 0, content);
    }
    this.drop(chatId);
    if (!ids.length) return true;
    const chat =
      old && appendedOnly
        ? appended(old, ids, messages.slice(old.ids.length) as string[])
        : indexed(
            messages.map((m) =>
              typeof m === 'string' ? m : writtenMessage(old as IndexedChat, m),
            ),
            ids,
          );
    texts.set(chatId, chat);
    this.size += chat.text.length + 1;
    return true;
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
    this.handed.clear();
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
   * The chat's first message, as written, that holds `needle` as `searchSnippet` finds it (any letter case,
   * any whitespace between its words), as of the last `chatsMentioning()`: the snippet is cut from it. Null
   * when none holds it; undefined when there is no index (the caller reads the messages from the database).
   */
  messageHolding(chatId: string, needle: string): string | null | undefined {
    if (!this.texts) return undefined;
    const chat = this.texts.get(chatId);
    if (!chat) return null;
    const index = firstHolding(chat, needle);
    return index < 0 ? null : writtenMessage(chat, index);
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
    // A reply under way: what it has stored so far (the owner's words at least) is found too.
    for (const chatId of this.replying) this.stale.add(chatId);
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
      this.reading = chatId;
      try {
        await this.refresh(texts, chatId);
      } finally {
        this.reading = null;
      }
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
      texts.set(
        chatId,
        indexed(
          list.map((m) => m.content),
          list.map((m) => m.id),
        ),
      );
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
      .lean<Pick<MessageRecord, '_id' | 'content'>[]>()
      .exec();
    if (this.texts !== texts) return;
    this.drop(chatId);
    if (!messages.length) return;
    const chat = indexed(
      messages.map((m) => m.content ?? ''),
      messages.map((m) => String(m._id)),
    );
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

/** A chat's entry from its messages as written, oldest first, and their ids (which units of the search may leave out). */
export function indexed(
  messages: readonly string[],
  ids: string[] = messages.map(() => ''),
): IndexedChat {
  return appended(EMPTY_CHAT, ids, messages);
}

const EMPTY_CHAT: IndexedChat = {
  text: '',
  ids: [],
  starts: new Uint32Array(0),
  trigrams: new Uint32Array(TRIGRAM_BITS / 32),
  casedAt: new Uint32Array(0),
  casedUnits: new Uint16Array(0),
  written: null,
};

/**
 * Bytes a message kept whole costs beyond its characters (its string's header, its entry in `written`):
 * a message with fewer case marks than that (6 bytes each) keeps marks.
 */
const WRITTEN_OVERHEAD_BYTES = 48;

/**
 * `chat` with `added` (messages as written) after its own, `ids` being every message's id: only the new
 * text is lower-cased, marked and hashed.
 */
export function appended(
  chat: IndexedChat,
  ids: string[],
  added: readonly string[],
): IndexedChat {
  const from = chat.ids.length;
  const starts = new Uint32Array(from + added.length);
  starts.set(chat.starts);
  const casedAt: number[] = [];
  const casedUnits: number[] = [];
  let written: Map<number, string> | null = null;
  const lowered: string[] = [];
  let length = chat.text.length;
  for (let k = 0; k < added.length; k++) {
    const i = from + k;
    if (i > 0) length++;
    starts[i] = length;
    const message = added[k];
    const lower = message.toLocaleLowerCase();
    if (!markCase(message, lower, length, casedAt, casedUnits))
      (written ??= new Map(chat.written ?? [])).set(i, message);
    lowered.push(lower);
    length += lower.length;
  }
  // Joined at once: a text grown piece by piece is slower to read (and hash) until flattened.
  const text = from ? [chat.text, ...lowered].join('\n') : lowered.join('\n');
  const trigrams = chat.trigrams.slice();
  // The trigrams across the old text's end and the joining new line are new too.
  for (let i = Math.max(0, chat.text.length - 2); i + 2 < text.length; i++) {
    const bit = trigramBit(text, i);
    trigrams[bit >>> 5] |= 1 << (bit & 31);
  }
  const allAt = new Uint32Array(chat.casedAt.length + casedAt.length);
  allAt.set(chat.casedAt);
  allAt.set(casedAt, chat.casedAt.length);
  const allUnits = new Uint16Array(allAt.length);
  allUnits.set(chat.casedUnits);
  allUnits.set(casedUnits, chat.casedUnits.length);
  return {
    text,
    ids,
    starts,
    trigrams,
    casedAt: allAt,
    casedUnits: allUnits,
    written: written ?? chat.written,
  };
}

/**
 * The turn's messages (ids and texts) when every one is shown, in id order and newer than the chat's
 * last: what `put` would append as they are. Null otherwise (or for none), and `put` places them.
 */
function newAtEnd(
  chat: IndexedChat | undefined,
  turn: StoredTurn['messages'],
): { ids: string[]; texts: string[] } | null {
  let last = chat?.ids[chat.ids.length - 1] ?? '';
  const ids: string[] = [];
  const texts: string[] = [];
  for (const message of turn) {
    const id = String(message._id);
    if (message.hiddenWith || id <= last) return null;
    ids.push(id);
    texts.push(message.content ?? '');
    last = id;
  }
  return ids.length ? { ids, texts } : null;
}

/**
 * Adds the units where `message` differs from its lower-cased `lower` (placed at `offset` of the text) to
 * `at`/`units`; false, adding none, when the message must be kept whole instead (see `IndexedChat.written`).
 */
function markCase(
  message: string,
  lower: string,
  offset: number,
  at: number[],
  units: number[],
): boolean {
  if (lower === message) return true;
  if (lower.length !== message.length) return false;
  const mark = at.length;
  for (let j = 0; j < message.length; j++) {
    const unit = message.charCodeAt(j);
    if (unit !== lower.charCodeAt(j)) {
      at.push(offset + j);
      units.push(unit);
    }
  }
  if ((at.length - mark) * 6 <= message.length + WRITTEN_OVERHEAD_BYTES)
    return true;
  at.length = mark;
  units.length = mark;
  return false;
}

/** The chat's message at `index` as written: its lower-cased text with the case marks put back. */
export function writtenMessage(chat: IndexedChat, index: number): string {
  const whole = chat.written?.get(index);
  if (whole !== undefined) return whole;
  const { text, starts, casedAt, casedUnits } = chat;
  const start = starts[index];
  const end = index + 1 < starts.length ? starts[index + 1] - 1 : text.length;
  // The first mark at or after the message's start.
  let low = 0;
  let high = casedAt.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (casedAt[middle] < start) low = middle + 1;
    else high = middle;
  }
  let out = '';
  let at = start;
  for (let k = low; k < casedAt.length && casedAt[k] < end; k++) {
    out += text.slice(at, casedAt[k]) + String.fromCharCode(casedUnits[k]);
    at = casedAt[k] + 1;
  }
  return out + text.slice(at, end);
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

/** The index of the chat's first message holding `needle` (see `messageHolding`), -1 when none does. */
export function firstHolding(chat: IndexedChat, needle: string): number {
  const words = needle.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return -1;
  // One scan of the chat's lower-cased text; a match across two messages (the joining new line) does not count.
  const pattern = new RegExp(words.map(escapeRegExp).join('\\s+'), 'g');
  const { text, starts } = chat;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const index = messageAt(starts, match.index);
    const end = index + 1 < starts.length ? starts[index + 1] - 1 : text.length;
    if (match.index + match[0].length <= end) return index;
    pattern.lastIndex = match.index + 1;
  }
  return -1;
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
