import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import MiniSearch, { type SearchResult } from 'minisearch';
import { Types, type Model } from 'mongoose';
import type { AppEventMap, ChatKind } from '@metatronos/shared-types';
import { SandboxSecrets } from '../mongo-sandbox/sandbox-secrets';
import { ChatRecord } from '../chats/schemas/chat.schema';
import { MessageRecord } from '../chats/schemas/message.schema';
import { MemoryNoteRecord } from './memory-note.schema';
import { redactSecrets } from './secret-redaction';
import { indexTerm, words } from './word-forms';

/** What the index keeps of a document besides its terms (the text itself stays in the database). */
interface DocMeta {
  kind: 'note' | 'message';
  /** The record's id (hex). */
  id: string;
  chatId: string | null;
  /** ms since epoch: a note's observedAt, a message's createdAt. */
  date: number;
  /** Messages: whether it is a user message (the owner's, a contact's or a trigger's). */
  user?: boolean;
  /** Notes only. */
  status?: string;
  supersededBy?: string | null;
  expiresAt?: number | null;
}

export interface IndexHit {
  kind: 'note' | 'message';
  id: string;
  chatId: string | null;
  date: number;
  score: number;
  /** The query's words this document matched (word forms). */
  terms?: readonly string[];
}

export interface IndexQuery {
  text: string;
  limit: number;
  since?: number;
  until?: number;
  /** Notes only (the prompt's recall). */
  notesOnly?: boolean;
  /** Whether a message of this chat may be shown. */
  chatVisible(chatId: string): boolean;
  now: number;
}

/** A note's score when a newer note replaced it: still found, always below its successor. */
const SUPERSEDED_FACTOR = 0.5;
/**
 * Two hits that match the same query words and score within this ratio are a tie: the newer
 * ranks first (a fact told again later, "we moved to Lisbon" after "we moved to Hamburg").
 */
const TIE_RATIO = 0.6;
/** Hits re-ordered for ties at most (the rest keep the score order). */
const TIE_WINDOW = 60;
/** Half-life of the small recency boost (a year-old hit keeps most of its score). */
const RECENCY_HALF_LIFE_MS = 120 * 86_400_000;
const RECENCY_WEIGHT = 0.15;

const docId = (kind: 'note' | 'message', id: string): string =>
  `${kind === 'note' ? 'n' : 'm'}:${id}`;

/**
 * The full-text index of memory search: every note and every message's text, in
 * memory (MiniSearch: BM25 ranking, prefix and typo tolerance, word forms through
 * `indexTerm`). Built from the database once the app listens (in the background:
 * a search before it is ready waits for it); then it follows the writes: a chat
 * whose reply ended, a delivery, a created or deleted chat is read again by its
 * indexed `chatId`; a note is put or removed by the memory service as it writes.
 * Secrets are taken out of the text before it is indexed.
 */
@Injectable()
export class MemoryIndex
  implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private readonly logger = new Logger(MemoryIndex.name);
  private mini = MemoryIndex.create();
  private readonly meta = new Map<string, DocMeta>();
  private readonly chatDocs = new Map<string, Set<string>>();
  private readonly chatKinds = new Map<string, ChatKind>();
  private ready: Promise<void> | null = null;
  /** Chat refreshes run one after another; a search waits for those already asked. */
  private refreshing: Promise<void> = Promise.resolve();
  /**
   * The messages of replies that started, by chat: read with the reply when it ends (one read
   * of each, not one at the start and again at the end), or by a message search before then.
   */
  private readonly unread = new Map<string, string[]>();
  private builtMs = 0;
  /** Note writes made while a build reads the database, applied again to the new index. */
  private duringBuild: Array<() => void> | null = null;
  /** The app is stopping (or failed to start): a build cut short by the closed database is no error. */
  private stopped = false;

  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    private readonly secrets: SandboxSecrets,
  ) {}

  private static create(): MiniSearch<{ id: string; text: string }> {
    return new MiniSearch<{ id: string; text: string }>({
      fields: ['text'],
      storeFields: [],
      tokenize: (text) => words(text),
      processTerm: (term) => indexTerm(term),
    });
  }

  onApplicationBootstrap(): void {
    // After listening: the API answers while the index is read; searches wait for it.
    setImmediate(() => {
      if (!this.stopped) void this.whenReady();
    });
  }

  onModuleDestroy(): void {
    this.stopped = true;
  }

  onApplicationShutdown(): void {
    this.stopped = true;
  }

  /** The index, built once (a search before the start-up build ends waits for it). */
  whenReady(): Promise<void> {
    this.ready ??= this.rebuild().catch((error: Error) => {
      // A build cut short because the app stops (the database client closed) is no failure.
      if (!this.stopped && this.notes.db.readyState === 1)
        this.logger.error(`Memory index build failed: ${error.message}`);
      this.ready = null;
    });
    return this.ready;
  }

  /** How long the last full build took (ms), and how many documents it holds. */
  stats(): { buildMs: number; documents: number } {
    return { buildMs: this.builtMs, documents: this.meta.size };
  }

  kindOf(chatId: string): ChatKind | undefined {
    return this.chatKinds.get(chatId);
  }

  /** Reads every note, chat and message again (start-up, a restored backup). */
  async rebuild(): Promise<void> {
    const started = performance.now();
    this.duringBuild = [];
    try {
      await this.build(started);
    } finally {
      this.duringBuild = null;
    }
  }

  private async build(started: number): Promise<void> {
    const mini = MemoryIndex.create();
    const meta = new Map<string, DocMeta>();
    const chatDocs = new Map<string, Set<string>>();
    const chatKinds = new Map<string, ChatKind>();
    const known = await this.secrets.currentSecrets();
    for (const chat of await this.chats
      .find({}, { kind: 1 })
      .lean<Pick<ChatRecord, '_id' | 'kind'>[]>()
      .exec())
      chatKinds.set(String(chat._id), chat.kind ?? 'chat');
    const batch: Array<{ id: string; text: string }> = [];
    const chatIds = new Map<string, string>();
    const cursor = this.messages
      .find({}, { chatId: 1, role: 1, content: 1, createdAt: 1 })
      .lean<
        Pick<MessageRecord, '_id' | 'chatId' | 'role' | 'content' | 'createdAt'>
      >()
      .cursor({ batchSize: 2000 });
    for await (const message of cursor) {
      if (!message.content?.trim()) continue;
      const id = String(message._id);
      // One string per chat, shared by its messages' entries (100,000 copies otherwise).
      const hex = String(message.chatId);
      let chatId = chatIds.get(hex);
      if (!chatId) chatIds.set(hex, (chatId = hex));
      const key = docId('message', id);
      meta.set(key, {
        kind: 'message',
        id,
        chatId,
        date: new Date(message.createdAt).getTime(),
        user: message.role === 'user',
      });
      let set = chatDocs.get(chatId);
      if (!set) chatDocs.set(chatId, (set = new Set()));
      set.add(key);
      batch.push({ id: key, text: redactSecrets(message.content, known) });
      if (batch.length >= 2000) mini.addAll(batch.splice(0));
    }
    mini.addAll(batch.splice(0));
    for (const note of await this.notes
      .find({ status: { $ne: 'proposed' } })
      .lean<MemoryNoteRecord[]>()
      .exec()) {
      const key = docId('note', note._id.toHexString());
      meta.set(key, noteMeta(note));
      mini.add({ id: key, text: note.text });
    }
    this.mini = mini;
    this.meta.clear();
    for (const [k, v] of meta) this.meta.set(k, v);
    this.chatDocs.clear();
    for (const [k, v] of chatDocs) this.chatDocs.set(k, v);
    this.chatKinds.clear();
    for (const [k, v] of chatKinds) this.chatKinds.set(k, v);
    const replay = this.duringBuild ?? [];
    this.duringBuild = null;
    for (const apply of replay) apply();
    this.builtMs = performance.now() - started;
    this.logger.log(
      `Memory index: ${this.meta.size} documents in ${Math.round(this.builtMs)} ms`,
    );
  }

  @OnEvent('chats.changed')
  onChatChanged(event: AppEventMap['chats.changed']): void {
    const { chatId, change, messageIds } = event;
    // A title, a pin or a mode is not message text; a delivery changes no text either.
    if (change === 'renamed' || change === 'mode' || change === 'updated')
      return;
    if (change === 'delivery') return;
    if (change === 'reply-started' && messageIds?.length) {
      this.unread.set(chatId, [
        ...(this.unread.get(chatId) ?? []),
        ...messageIds,
      ]);
      return;
    }
    const unread = this.unread.get(chatId) ?? [];
    this.unread.delete(chatId);
    const ids = [...new Set([...unread, ...(messageIds ?? [])])];
    this.refreshing = this.refreshing
      .then(async () => {
        // Before the first build there is nothing to refresh: the build reads this chat.
        if (!this.ready) return;
        await this.ready;
        if (change === 'deleted') this.dropChat(chatId);
        else if (change === 'created') await this.readMessages(chatId, []);
        else if (messageIds?.length) await this.readMessages(chatId, ids);
        else await this.refreshChat(chatId);
      })
      .catch((error: Error) =>
        this.logger.warn(`Memory index refresh failed: ${error.message}`),
      );
  }

  /** The latest user message of a chat before `before` (ids are time-ordered), when the index has it. */
  userMessageBefore(chatId: string, before: string | null): string | null {
    // A reply running in the chat: its user message is not read yet, an older one would be found.
    if (this.unread.has(chatId)) return null;
    let best: string | null = null;
    for (const key of this.chatDocs.get(chatId) ?? []) {
      const doc = this.meta.get(key);
      if (!doc?.user || (before && doc.id >= before)) continue;
      if (!best || doc.id > best) best = doc.id;
    }
    return best;
  }

  @OnEvent('backup.restored')
  onRestored(): void {
    this.ready = null;
    void this.whenReady();
  }

  /** Puts a note (new or edited) in the index; a proposal is not searchable. */
  putNote(note: MemoryNoteRecord): void {
    this.duringBuild?.push(() => this.putNote(note));
    const key = docId('note', note._id.toHexString());
    this.drop(key);
    if (note.status === 'proposed') return;
    this.meta.set(key, noteMeta(note));
    this.mini.add({ id: key, text: note.text });
  }

  removeNote(id: string): void {
    this.duringBuild?.push(() => this.removeNote(id));
    this.drop(docId('note', id));
  }

  async search(query: IndexQuery): Promise<IndexHit[]> {
    await this.whenReady();
    if (!query.notesOnly) this.readUnread();
    await this.refreshing;
    const filter = (result: SearchResult): boolean => {
      const doc = this.meta.get(result.id as string);
      if (!doc) return false;
      if (query.since !== undefined && doc.date < query.since) return false;
      if (query.until !== undefined && doc.date > query.until) return false;
      if (doc.kind === 'note')
        return (
          doc.status !== 'proposed' &&
          (doc.expiresAt == null || doc.expiresAt > query.now)
        );
      if (query.notesOnly) return false;
      return doc.chatId !== null && query.chatVisible(doc.chatId);
    };
    // Exact words and prefixes first; typo tolerance only when they find too little (it costs the most).
    const exact = this.mini.search(query.text, {
      prefix: (term) => term.length >= 4,
      weights: { prefix: 0.5, fuzzy: 0.4 },
      filter,
    });
    const found =
      exact.length >= query.limit
        ? exact
        : this.mini.search(query.text, {
            prefix: (term) => term.length >= 4,
            fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
            weights: { prefix: 0.5, fuzzy: 0.4 },
            filter,
          });
    // Only the head can reach the answer: the recency boost moves a hit by at most RECENCY_WEIGHT.
    const head = found.slice(0, Math.max(query.limit * 4, TIE_WINDOW * 2));
    const hits: IndexHit[] = [];
    for (const result of head) {
      const doc = this.meta.get(result.id as string) as DocMeta;
      const age = Math.max(0, query.now - doc.date);
      let score =
        result.score *
        (1 + RECENCY_WEIGHT * Math.pow(0.5, age / RECENCY_HALF_LIFE_MS));
      if (doc.kind === 'note' && doc.supersededBy) score *= SUPERSEDED_FACTOR;
      hits.push({
        kind: doc.kind,
        id: doc.id,
        chatId: doc.chatId,
        date: doc.date,
        score,
        terms: result.queryTerms,
      });
    }
    hits.sort((a, b) => b.score - a.score || b.date - a.date);
    return keepSuccessorsFirst(newerFirstOnTies(hits), this.meta).slice(
      0,
      query.limit,
    );
  }

  /**
   * Reads the given messages by `_id` (the one filter FerretDB answers from its index) and puts them
   * in the index: a turn's messages, named by its `chats.changed` events, without a scan of the chat.
   */
  private async readMessages(chatId: string, ids: string[]): Promise<void> {
    if (!this.chatKinds.has(chatId)) {
      const chat = Types.ObjectId.isValid(chatId)
        ? await this.chats
            .findById(chatId, { kind: 1 })
            .lean<Pick<ChatRecord, 'kind'>>()
            .exec()
        : null;
      if (!chat) return;
      this.chatKinds.set(chatId, chat.kind ?? 'chat');
    }
    const known = await this.secrets.currentSecrets();
    const found = await Promise.all(
      ids
        .filter((id) => Types.ObjectId.isValid(id))
        .map((id) =>
          this.messages
            .findById(id, { role: 1, content: 1, createdAt: 1 })
            .lean<
              Pick<MessageRecord, '_id' | 'role' | 'content' | 'createdAt'>
            >()
            .exec(),
        ),
    );
    let set = this.chatDocs.get(chatId);
    if (!set) this.chatDocs.set(chatId, (set = new Set()));
    for (const [i, message] of found.entries()) {
      const key = docId('message', ids[i]);
      this.drop(key);
      set.delete(key);
      if (!message?.content?.trim()) continue;
      this.meta.set(key, {
        kind: 'message',
        id: ids[i],
        chatId,
        date: new Date(message.createdAt).getTime(),
        user: message.role === 'user',
      });
      set.add(key);
      this.mini.add({ id: key, text: redactSecrets(message.content, known) });
    }
  }

  /** Reads the messages of running replies now (a search of messages must find them). */
  private readUnread(): void {
    if (!this.unread.size) return;
    const chats = [...this.unread];
    this.unread.clear();
    this.refreshing = this.refreshing
      .then(async () => {
        if (!this.ready) return;
        await this.ready;
        for (const [chatId, ids] of chats) await this.readMessages(chatId, ids);
      })
      .catch((error: Error) =>
        this.logger.warn(`Memory index refresh failed: ${error.message}`),
      );
  }

  private dropChat(chatId: string): void {
    for (const key of this.chatDocs.get(chatId) ?? []) this.drop(key);
    this.chatDocs.delete(chatId);
    this.chatKinds.delete(chatId);
  }

  private async refreshChat(chatId: string): Promise<void> {
    for (const key of this.chatDocs.get(chatId) ?? []) this.drop(key);
    this.chatDocs.delete(chatId);
    if (!Types.ObjectId.isValid(chatId)) return;
    const oid = new Types.ObjectId(chatId);
    const chat = await this.chats
      .findById(oid, { kind: 1 })
      .lean<Pick<ChatRecord, 'kind'>>()
      .exec();
    if (!chat) {
      this.chatKinds.delete(chatId);
      return;
    }
    this.chatKinds.set(chatId, chat.kind ?? 'chat');
    const known = await this.secrets.currentSecrets();
    const messages = await this.messages
      .find({ chatId: oid }, { role: 1, content: 1, createdAt: 1 })
      .lean<Pick<MessageRecord, '_id' | 'role' | 'content' | 'createdAt'>[]>()
      .exec();
    const set = new Set<string>();
    for (const message of messages) {
      if (!message.content?.trim()) continue;
      const id = String(message._id);
      const key = docId('message', id);
      this.meta.set(key, {
        kind: 'message',
        id,
        chatId,
        date: new Date(message.createdAt).getTime(),
        user: message.role === 'user',
      });
      set.add(key);
      this.mini.add({ id: key, text: redactSecrets(message.content, known) });
    }
    if (set.size) this.chatDocs.set(chatId, set);
  }

  private drop(key: string): void {
    if (!this.meta.has(key)) return;
    this.meta.delete(key);
    this.mini.discard(key);
  }
}

function noteMeta(note: MemoryNoteRecord): DocMeta {
  return {
    kind: 'note',
    id: note._id.toHexString(),
    chatId: note.chatId ?? null,
    date: new Date(note.observedAt).getTime(),
    status: note.status,
    supersededBy: note.supersededBy ?? null,
    expiresAt: note.expiresAt ? new Date(note.expiresAt).getTime() : null,
  };
}

/**
 * Recency as the tie-breaker: going down the list, the next hit is the newest of those that
 * score within TIE_RATIO of the best remaining one and match at least the words it matched.
 */
export function newerFirstOnTies(hits: IndexHit[]): IndexHit[] {
  const head = hits.slice(0, TIE_WINDOW);
  const out: IndexHit[] = [];
  while (head.length) {
    const best = head[0];
    const words = best.terms ?? [];
    let pick = 0;
    for (let i = 1; i < head.length; i++) {
      const other = head[i];
      if (other.score < best.score * TIE_RATIO) break;
      if (
        other.date > head[pick].date &&
        words.every((w) => other.terms?.includes(w))
      )
        pick = i;
    }
    out.push(...head.splice(pick, 1));
  }
  return [...out, ...hits.slice(TIE_WINDOW)];
}

/** A superseded note found above the note that replaced it moves just below it. */
function keepSuccessorsFirst(
  hits: IndexHit[],
  meta: ReadonlyMap<string, DocMeta>,
): IndexHit[] {
  const position = new Map(
    hits.filter((h) => h.kind === 'note').map((h, i) => [h.id, i]),
  );
  if (position.size < 2) return hits;
  const out = [...hits];
  for (const hit of hits) {
    if (hit.kind !== 'note') continue;
    const successor = meta.get(docId('note', hit.id))?.supersededBy;
    if (!successor || !position.has(successor)) continue;
    const from = out.indexOf(hit);
    const to = out.findIndex((h) => h.kind === 'note' && h.id === successor);
    if (from < to) {
      out.splice(from, 1);
      out.splice(to, 0, hit);
      hit.score = Math.min(hit.score, out[to - 1].score);
    }
  }
  return out;
}
