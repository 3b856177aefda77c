import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes } from 'node:crypto';
import { Types, type Model } from 'mongoose';
import type { AppEventMap, ChatKind } from '@metatronos/shared-types';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { KnownSecrets } from '../secrets/known-secrets';
import { ChatRecord } from '../chats/schemas/chat.schema';
import { MessageRecord } from '../chats/schemas/message.schema';
import { TURN_STORED, type StoredTurn } from '../chats/stored-turn';
import { DocTable } from './doc-table';
import { IndexSnapshotFiles, type JournalEntry } from './index-snapshot';
import { snapshotPieces } from './snapshot-writer';
import { PostingsStore } from './postings-store';
import { MemoryNoteRecord } from './memory-note.schema';
import { RankedSearch } from './ranked-search';
import { indexTerm, words } from './word-forms';

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

/** A document put in (or taken out of) the index, for those that follow it (the embeddings). */
export interface IndexChange {
  kind: 'note' | 'message';
  id: string;
  removed: boolean;
  /** A message's text as indexed (secrets scrubbed), so a follower need not read it again. */
  text?: string;
}

/** How the index was last made ready. */
export interface IndexStats {
  buildMs: number;
  documents: number;
  /** `snapshot`: loaded from DATA_DIR and caught up; `database`: every message read. */
  source: 'snapshot' | 'database' | 'none';
  /** Messages and journal entries read after loading a snapshot. */
  caughtUp: number;
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
/** Messages read per batch at a full build; the event loop runs between batches. */
const BUILD_BATCH = 2000;
/** Newer messages read per page when catching up from a snapshot. */
const CATCH_UP_PAGE = 500;
/** Newer messages read after a snapshot at most; a snapshot further behind is not used. */
const MAX_CATCH_UP = 20_000;
/** Journal entries after which the snapshot is written again. */
const SAVE_AFTER_CHANGES = 500;
/**
 * Changes read at start after which the snapshot is written again at once (reading 5,000 newer
 * messages takes about a second; writing the snapshot blocks for one or two and needs memory).
 */
const SAVE_AFTER_CATCH_UP = 5000;
/** Where the database side of the snapshot's token is kept (one document). */
const STATE_COLLECTION = 'memory_index';
const STATE_ID = 'snapshot';
const WEIGHTS = { prefix: 0.5, fuzzy: 0.4 };
const prefixOf = (term: string): boolean => term.length >= 4;
const fuzzyOf = (term: string): number | false =>
  term.length >= 5 ? 0.2 : false;

type IndexedMessage = Pick<
  MessageRecord,
  '_id' | 'role' | 'content' | 'createdAt' | 'hiddenWith'
>;
const MESSAGE_FIELDS = {
  role: 1,
  content: 1,
  createdAt: 1,
  hiddenWith: 1,
} as const;
/** What the index reads of a note (not its history, which can be long). */
const NOTE_FIELDS = {
  text: 1,
  status: 1,
  chatId: 1,
  observedAt: 1,
  supersededBy: 1,
  expiresAt: 1,
} as const;
type IndexedNote = Pick<MemoryNoteRecord, '_id' | keyof typeof NOTE_FIELDS>;

/**
 * The full-text index of memory search: every note and every message's text, in
 * memory (`PostingsStore`: typed-array postings, terms in MiniSearch's radix tree;
 * `RankedSearch` scores as MiniSearch does: BM25, prefix and typo tolerance, word forms
 * through `indexTerm`). Documents are numbered slots of a `DocTable`.
 *
 * At start (in the background once the app listens: a search before it is ready waits)
 * the message part is loaded from its snapshot in `DATA_DIR/memory-index/` and caught up:
 * messages newer than the snapshot (by `_id`, the one order FerretDB reads from its index),
 * then the journal of chats changed since it was written. A snapshot of another database,
 * other secrets or a message count that does not match is not trusted: every message is
 * read again, and a new snapshot written. Notes are always read from the database.
 * Then the index follows the writes: a chat whose reply ended, a created or deleted chat
 * is read again by its indexed `chatId` (and journaled); a note is put or removed by the
 * memory service as it writes. Secrets are taken out of the text before it is indexed.
 */
@Injectable()
export class MemoryIndex
  implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private readonly logger = new Logger(MemoryIndex.name);
  private store = new PostingsStore();
  private table = new DocTable();
  private readonly chatKinds = new Map<string, ChatKind>();
  private readonly ranking = new RankedSearch();
  private readonly files: IndexSnapshotFiles;
  private ready: Promise<void> | null = null;
  /** Chat refreshes run one after another; a search waits for those already asked. */
  private refreshing: Promise<void> = Promise.resolve();
  /**
   * The messages of replies under way, by chat: read once when the reply ends (or by a message
   * search before then), not also when it starts. A crash before the end loses nothing: the
   * start-up catch-up reads messages newer than the snapshot, and a snapshot saved meanwhile
   * without them fails its message count, so everything is read again.
   */
  private readonly unread = new Map<string, string[]>();
  /** A finished turn's messages as stored (TURN_STORED), taken by the `reply-ended` that follows it. */
  private readonly handed = new Map<string, IndexedMessage[]>();
  private lastStats: IndexStats = {
    buildMs: 0,
    documents: 0,
    source: 'none',
    caughtUp: 0,
  };
  /** Note writes made while a build reads the database, applied again to the new index. */
  private duringBuild: Array<() => void> | null = null;
  /** The app is stopping (or failed to start): a build cut short by the closed database is no error. */
  private stopped = false;
  /** The last journal entry written, and the last one whose change the index holds. */
  private seq = 0;
  private appliedSeq = 0;
  private changesSinceSave = 0;
  private saving: Promise<void> | null = null;
  /**
   * While the snapshot is written in slices the index must not change under it: note writes
   * wait here (a forgotten note leaves search at once all the same), its postings' removal in
   * `heldDiscards`; a chat refresh waits for `heldUntil`.
   */
  private held: Array<() => void> | null = null;
  private heldDiscards: number[] = [];
  private heldUntil: Promise<void> | null = null;
  /** The chat refresh changing the index now (a hold starts only between two). */
  private applying: Promise<void> | null = null;
  /** A digest of the secrets the indexed text was cleaned of. */
  private secretsHash = '';
  private readonly watchers: Array<(change: IndexChange) => void> = [];
  private readonly builtListeners: Array<() => void> = [];

  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    private readonly secrets: KnownSecrets,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.files = new IndexSnapshotFiles(config.dataDir);
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

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    // A snapshot being written is finished (it is replaced atomically either way).
    await this.saving;
    await this.files.stop();
  }

  /** The index, made ready once (a search before that waits for it). */
  whenReady(): Promise<void> {
    this.ready ??= this.start().catch((error: Error) => {
      // A build cut short because the app stops (the database client closed) is no failure.
      if (!this.stopped && this.notes.db.readyState === 1)
        this.logger.error(`Memory index build failed: ${error.message}`);
      this.ready = null;
    });
    return this.ready;
  }

  /** How the index was last made ready, and how many documents it holds. */
  stats(): IndexStats {
    return { ...this.lastStats, documents: this.table.indexed };
  }

  /** Calls `listener` for every document put in or taken out after this (not for builds at start). */
  watch(listener: (change: IndexChange) => void): void {
    this.watchers.push(listener);
  }

  /**
   * Calls `listener` after each build (at start, after a secret changed, after a restore): a build
   * announces no document one by one, so a follower compares all it holds then.
   */
  onBuilt(listener: () => void): void {
    this.builtListeners.push(listener);
  }

  /** Resolves once a refresh queued now (a secret changed: a build) is done and the index ready. */
  async idle(): Promise<void> {
    await this.refreshing;
    await this.whenReady();
    await this.saving;
  }

  private changed(change: IndexChange): void {
    // A build reads everything again: the followers compare with what they hold instead.
    if (this.duringBuild) return;
    for (const watcher of this.watchers) watcher(change);
  }

  /** Every indexed document (notes that are not proposals, messages with text). */
  *documents(): Generator<{
    kind: 'note' | 'message';
    id: string;
    chatId: string | null;
  }> {
    const table = this.table;
    for (const slot of table.indexedSlots()) {
      const doc = table.view(slot);
      if (doc) yield { kind: doc.kind, id: doc.id, chatId: doc.chatId };
    }
  }

  /** A document's chat and date, when the index has it. */
  describe(
    kind: 'note' | 'message',
    id: string,
  ): { chatId: string | null; date: number } | null {
    const slot = this.table.slotOf(kind, id);
    const doc = slot === undefined ? null : this.table.view(slot);
    return doc ? { chatId: doc.chatId, date: doc.date } : null;
  }

  /** The note that replaced this one, if any. */
  successorOf(noteId: string): string | null {
    const slot = this.table.slotOf('note', noteId);
    return slot === undefined
      ? null
      : (this.table.note(slot)?.supersededBy ?? null);
  }

  /** Whether a document may be a hit of `query` (dates, visibility, expiry), as the keyword search decides. */
  acceptor(
    query: IndexQuery,
  ): (kind: 'note' | 'message', id: string) => boolean {
    const table = this.table;
    const accept = this.slotAcceptor(query, table);
    return (kind, id) => {
      const slot = table.slotOf(kind, id);
      return slot !== undefined && table.isIndexed(slot) && accept(slot);
    };
  }

  private slotAcceptor(
    query: IndexQuery,
    table: DocTable,
  ): (slot: number) => boolean {
    return (slot: number): boolean => {
      const date = table.date(slot);
      if (query.since !== undefined && date < query.since) return false;
      if (query.until !== undefined && date > query.until) return false;
      const note = table.isNote(slot) ? table.note(slot) : undefined;
      if (note)
        return (
          note.status !== 'proposed' &&
          (note.expiresAt == null || note.expiresAt > query.now)
        );
      if (query.notesOnly) return false;
      const chatId = table.chatOf(slot);
      return chatId !== null && query.chatVisible(chatId);
    };
  }

  kindOf(chatId: string): ChatKind | undefined {
    return this.chatKinds.get(chatId);
  }

  /** Reads every note, chat and message again, and writes a new snapshot (a restored backup). */
  async rebuild(): Promise<void> {
    await this.refreshing;
    // A snapshot being written (the start-up's) would land after this build cleared the folder.
    await this.saving;
    const started = performance.now();
    this.duringBuild = [];
    try {
      await this.build();
      this.finish(started, 'database', 0);
    } finally {
      this.duringBuild = null;
    }
    await this.save();
  }

  /** Forgets the index in memory and makes it ready again as at start (the bench's restart). */
  async restart(): Promise<void> {
    await this.refreshing;
    await this.saving;
    this.store = new PostingsStore();
    this.table = new DocTable();
    this.chatKinds.clear();
    this.ready = null;
    await this.whenReady();
  }

  private async start(): Promise<void> {
    const started = performance.now();
    this.duringBuild = [];
    try {
      const caughtUp = await this.loadSnapshot().catch((error: Error) => {
        this.logger.warn(
          `Memory index snapshot not used: ${error.message}; reading every message`,
        );
        return null;
      });
      if (caughtUp === null) {
        await this.build();
        this.finish(started, 'database', 0);
      } else this.finish(started, 'snapshot', caughtUp);
    } finally {
      this.duringBuild = null;
    }
    if (
      this.lastStats.source === 'database' ||
      this.lastStats.caughtUp >= SAVE_AFTER_CATCH_UP
    )
      void this.save();
  }

  private finish(
    started: number,
    source: IndexStats['source'],
    caughtUp: number,
  ): void {
    const replay = this.duringBuild ?? [];
    this.duringBuild = null;
    for (const apply of replay) apply();
    for (const listener of this.builtListeners) listener();
    this.lastStats = {
      buildMs: performance.now() - started,
      documents: 0,
      source,
      caughtUp,
    };
    this.logger.log(
      `Memory index: ${this.table.indexed} documents in ${Math.round(this.lastStats.buildMs)} ms (${source === 'snapshot' ? `snapshot, ${caughtUp} changes read after it` : 'every message read'})`,
    );
  }

  /** Every chat, message and note from the database. */
  private async build(): Promise<void> {
    const store = new PostingsStore();
    const table = new DocTable();
    const chatKinds = await this.readChatKinds();
    const known = await this.secrets.values();
    const scrub = await this.secrets.scrubber();
    // What an older snapshot and journal held is replaced by this build.
    await this.files.clear();
    let batch = 0;
    const cursor = this.messages
      .find({}, { chatId: 1, ...MESSAGE_FIELDS })
      .lean<IndexedMessage & Pick<MessageRecord, 'chatId'>>()
      .cursor({ batchSize: BUILD_BATCH });
    for await (const message of cursor) {
      const text = searchableText(message, scrub);
      const slot = table.setMessage(
        String(message._id),
        String(message.chatId),
        new Date(message.createdAt).getTime(),
        message.role === 'user',
        !!text,
      );
      if (text) store.add(slot, text);
      if (++batch >= BUILD_BATCH) {
        batch = 0;
        // Let requests in between batches: a start-up build must not freeze the API.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    // Runs grew by moving as the messages came: their old places are given back (tens of ms).
    store.sweep();
    this.install(store, table, chatKinds);
    await this.readNotes();
    // Journal entries written so far are all in this build.
    this.appliedSeq = this.seq;
    this.secretsHash = hashSecrets(known);
  }

  /**
   * Loads the snapshot and reads what changed after it; the number of changes read, or
   * null when there is no snapshot to trust (the caller then reads everything).
   */
  private async loadSnapshot(): Promise<number | null> {
    const loaded = await this.files.read();
    if (!loaded) return null;
    const snapshot = loaded.head;
    const scrub = await this.secrets.scrubber();
    const secretsHash = hashSecrets(await this.secrets.values());
    if (snapshot.secrets !== secretsHash) {
      this.logger.log(
        'Memory index snapshot made with other secrets: reading every message',
      );
      return null;
    }
    const state = await this.notes.db
      .collection<{ _id: string; token: string }>(STATE_COLLECTION)
      .findOne({ _id: STATE_ID });
    if (state?.token !== snapshot.token) {
      this.logger.log(
        'Memory index snapshot is not of this database: reading every message',
      );
      return null;
    }
    const table = DocTable.load(snapshot.messages);
    const chatKinds = await this.readChatKinds();
    const count = await this.messages.estimatedDocumentCount().exec();
    this.install(loaded.store, table, chatKinds);
    const newer = await this.readNewerThan(snapshot.newest, scrub);
    if (newer === null) {
      this.logger.log(
        `Memory index snapshot is more than ${MAX_CATCH_UP} messages behind: reading every message`,
      );
      return null;
    }
    let changes = newer;
    const journal = (await this.files.readJournal()).filter(
      (entry) => entry.seq > snapshot.seq,
    );
    for (const entry of journal) {
      await this.apply(entry);
      changes++;
    }
    this.seq = this.appliedSeq = Math.max(
      snapshot.seq,
      ...journal.map((e) => e.seq),
    );
    if (this.table.messages !== count) {
      this.logger.log(
        `Memory index snapshot holds ${this.table.messages} messages, the database ${count}: reading every message`,
      );
      return null;
    }
    await this.readNotes();
    this.secretsHash = secretsHash;
    return changes;
  }

  private install(
    store: PostingsStore,
    table: DocTable,
    chatKinds: Map<string, ChatKind>,
  ): void {
    this.store = store;
    this.table = table;
    this.chatKinds.clear();
    for (const [k, v] of chatKinds) this.chatKinds.set(k, v);
  }

  private async readChatKinds(): Promise<Map<string, ChatKind>> {
    const kinds = new Map<string, ChatKind>();
    for (const chat of await this.chats
      .find({}, { kind: 1 })
      .lean<Pick<ChatRecord, '_id' | 'kind'>[]>()
      .exec())
      kinds.set(String(chat._id), chat.kind ?? 'chat');
    return kinds;
  }

  private async readNotes(): Promise<void> {
    // A note is scrubbed when written, but only of the secrets known then.
    const scrub = await this.secrets.scrubber();
    for (const note of await this.notes
      .find({ status: { $ne: 'proposed' } }, NOTE_FIELDS)
      .lean<IndexedNote[]>()
      .exec())
      this.indexNote({ ...note, text: scrub(note.text) });
  }

  /** Messages with an id above `newest`, newest first, a page at a time (FerretDB reads those from its `_id` index); null past MAX_CATCH_UP. */
  private async readNewerThan(
    newest: string | null,
    scrub: (text: string) => string,
  ): Promise<number | null> {
    let read = 0;
    for (let skip = 0; ; skip += CATCH_UP_PAGE) {
      const page = await this.messages
        .find({}, { chatId: 1, ...MESSAGE_FIELDS })
        .sort({ _id: -1 })
        .skip(skip)
        .limit(CATCH_UP_PAGE)
        .lean<Array<IndexedMessage & Pick<MessageRecord, 'chatId'>>>()
        .exec();
      for (const message of page) {
        if (newest && String(message._id) <= newest) return read;
        this.putMessage(String(message.chatId), message, scrub);
        read++;
      }
      if (page.length < CATCH_UP_PAGE) return read;
      // Each page reads the index from the top: past this, one pass over every message is cheaper.
      if (read >= MAX_CATCH_UP) return null;
    }
  }

  @OnEvent(TURN_STORED)
  onTurnStored(turn: StoredTurn): void {
    this.handed.set(turn.chatId, turn.messages);
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
    const unread = this.unread.get(chatId);
    this.unread.delete(chatId);
    const handed = this.handed.get(chatId);
    this.handed.delete(chatId);
    const ids = messageIds?.length
      ? [...new Set([...(unread ?? []), ...messageIds])]
      : undefined;
    this.queueChange(
      chatId,
      change,
      ids,
      change === 'reply-ended' ? handed : undefined,
    );
  }

  private queueChange(
    chatId: string,
    change: AppEventMap['chats.changed']['change'],
    messageIds: string[] | undefined,
    /** Messages of `messageIds` as stored, put without a read. */
    known?: IndexedMessage[],
  ): void {
    this.refreshing = this.refreshing
      .then(async () => {
        // Before the first build there is nothing to refresh: the build reads this chat.
        if (!this.ready) return;
        await this.ready;
        // Background work: a reply's end is indexed on the loop's next turn, once the response's
        // last bytes have left. Straight on, its journal line and indexing would run in the same
        // run of promise jobs, ahead of the socket write the SSE response queued (Node uncorks it
        // on the tick queue, after those jobs).
        await new Promise((resolve) => setImmediate(resolve));
        if (change === 'created') {
          await this.unheld(() => this.readMessages(chatId, []));
          return;
        }
        const entry: JournalEntry = {
          seq: ++this.seq,
          chatId,
          change:
            change === 'deleted'
              ? 'deleted'
              : messageIds?.length
                ? 'messages'
                : 'chat',
          ...(change !== 'deleted' && messageIds?.length ? { messageIds } : {}),
        };
        await this.journal(entry);
        await this.unheld(() => this.apply(entry, known));
        this.appliedSeq = entry.seq;
        if (++this.changesSinceSave >= SAVE_AFTER_CHANGES) void this.save();
      })
      .catch((error: Error) =>
        this.logger.warn(`Memory index refresh failed: ${error.message}`),
      );
  }

  /** Runs a change of the index once no snapshot is being written (see `held`). */
  private async unheld(work: () => Promise<void>): Promise<void> {
    while (this.heldUntil) await this.heldUntil;
    const running = work();
    this.applying = running;
    try {
      await running;
    } finally {
      if (this.applying === running) this.applying = null;
    }
  }

  /** Holds the index still (see `held`); the function returned lets the held writes in. */
  private async hold(): Promise<() => void> {
    while (this.applying) await this.applying.catch(() => undefined);
    const queue: Array<() => void> = [];
    let done = (): void => undefined;
    this.held = queue;
    this.heldUntil = new Promise<void>((resolve) => (done = resolve));
    return () => {
      this.held = null;
      this.heldUntil = null;
      // Discards first: a slot freed while held may be given to a note put while held.
      for (const slot of this.heldDiscards.splice(0)) this.store.discard(slot);
      for (const apply of queue) apply();
      done();
    };
  }

  private async apply(
    entry: JournalEntry,
    known?: IndexedMessage[],
  ): Promise<void> {
    if (entry.change === 'deleted') this.dropChat(entry.chatId);
    else if (entry.change === 'messages')
      await this.readMessages(entry.chatId, entry.messageIds ?? [], known);
    else await this.refreshChat(entry.chatId);
  }

  /** Notes the change for the next start; when that fails, the snapshot is no longer trusted. */
  private async journal(entry: JournalEntry): Promise<void> {
    try {
      await this.files.append(entry);
    } catch (error) {
      this.logger.warn(
        `Memory index journal not written (${(error as Error).message}): the next start reads every message`,
      );
      await this.files.clear().catch(() => undefined);
    }
  }

  /**
   * Writes the message part of the index to its snapshot (notes are left out), then keeps only
   * the journal entries it does not hold. Runs beside searches: the JSON is made in slices of a
   * few milliseconds (`snapshotPieces`) while the index is held still, so no request waits long.
   */
  /** Resolves once a snapshot being written is done, so the note writes held meanwhile are in the index. */
  async saved(): Promise<void> {
    await this.saving;
  }

  async save(): Promise<void> {
    this.saving ??= (async () => {
      let release: (() => void) | null = null;
      try {
        release = await this.hold();
        // No vacuum first (it blocked for hundreds of milliseconds): the writer leaves discarded postings out.
        if (this.stopped) return;
        const seq = this.appliedSeq;
        // The same token in the file and the database: a snapshot of another database is never used.
        const token = randomBytes(12).toString('hex');
        await this.files.write(this.serialize(seq, token));
        release();
        release = null;
        await this.notes.db
          .collection<{ _id: string; token: string }>(STATE_COLLECTION)
          .updateOne({ _id: STATE_ID }, { $set: { token } }, { upsert: true });
        this.changesSinceSave = Math.max(0, this.seq - seq);
        // Through the refresh queue, so no journal append falls between its read and its rewrite.
        // Not awaited: a queued step may wait for this save (a secret changed), and the save
        // waiting for the queue in turn would hold both forever (every search with them).
        this.refreshing = this.refreshing
          .then(() => this.files.trimJournal(seq))
          .catch((error: Error) =>
            this.logger.warn(
              `Memory index journal not trimmed: ${error.message}`,
            ),
          );
      } catch (error) {
        if (!this.stopped)
          this.logger.warn(
            `Memory index snapshot not written: ${(error as Error).message}`,
          );
      } finally {
        release?.();
        this.saving = null;
      }
    })();
    return this.saving;
  }

  private serialize(seq: number, token: string): AsyncIterable<Uint8Array> {
    const table = this.table;
    return snapshotPieces(
      {
        seq,
        token,
        secrets: this.secretsHash,
      },
      table,
      this.store,
      // Messages only (a note removed while held is no longer indexed in the table).
      (slot) => table.isIndexed(slot) && !table.isNote(slot),
    );
  }

  /** The latest user message of a chat before `before` (ids are time-ordered), when the index has it. */
  userMessageBefore(chatId: string, before: string | null): string | null {
    // A reply under way in the chat: its own user message is not read yet, an older one would be found.
    if (this.unread.has(chatId)) return null;
    return this.table.userMessageBefore(chatId, before);
  }

  /**
   * A secret saved now may sit in text indexed before it was known: everything is read again
   * without it (as at a first start; searches wait for it), and a new snapshot written.
   */
  @OnEvent('settings.updated')
  onSettingsUpdated(): void {
    this.refreshing = this.refreshing
      .then(async () => {
        if (!this.ready) return;
        await this.ready;
        if (hashSecrets(await this.secrets.values()) === this.secretsHash)
          return;
        await this.saving;
        await this.files.clear();
        this.ready = null;
        void this.whenReady();
      })
      .catch((error: Error) =>
        this.logger.warn(
          `Memory index not read again after a secret changed: ${error.message}`,
        ),
      );
  }

  /**
   * An email or calendar password, an MCP server's values or OAuth tokens (a sign-in shows as a status
   * change): secrets too. Read again only when the secrets' digest changed.
   */
  @OnEvent('accounts.changed')
  @OnEvent('mcp.changed')
  onSecretsMayChange(): void {
    this.onSettingsUpdated();
  }

  @OnEvent('backup.restored')
  onRestored(): void {
    this.refreshing = this.refreshing
      .then(() => this.files.clear())
      .catch((error: Error) =>
        this.logger.warn(`Memory index snapshot not removed: ${error.message}`),
      );
    this.ready = null;
    void this.refreshing.then(() => this.whenReady());
  }

  /** Puts a note (new or edited) in the index; a proposal is not searchable. */
  putNote(note: MemoryNoteRecord): void {
    if (this.held) {
      this.held.push(() => this.putNote(note));
      return;
    }
    this.duringBuild?.push(() => this.putNote(note));
    this.indexNote(note);
  }

  removeNote(id: string): void {
    if (this.held) {
      // Out of search at once (the table no longer has it); its postings go when the hold ends.
      const slot = this.table.slotOf('note', id);
      if (slot !== undefined) {
        if (this.table.isIndexed(slot)) this.heldDiscards.push(slot);
        this.table.remove(slot);
      }
      this.held.push(() => this.removeNote(id));
      return;
    }
    this.duringBuild?.push(() => this.removeNote(id));
    const slot = this.table.slotOf('note', id);
    if (slot !== undefined) this.dropSlot(slot);
  }

  private indexNote(note: IndexedNote): void {
    const id = note._id.toHexString();
    const old = this.table.slotOf('note', id);
    // Replaced in place (an edit, a status): its followers hear of the new version only.
    if (old !== undefined) {
      if (this.table.isIndexed(old)) this.store.discard(old);
      this.table.remove(old);
    }
    if (note.status === 'proposed') {
      if (old !== undefined) this.changed({ kind: 'note', id, removed: true });
      return;
    }
    const slot = this.table.setNote(
      id,
      note.chatId ?? null,
      new Date(note.observedAt).getTime(),
      {
        status: note.status,
        supersededBy: note.supersededBy ?? null,
        expiresAt: note.expiresAt ? new Date(note.expiresAt).getTime() : null,
      },
    );
    this.store.add(slot, note.text);
    this.changed({ kind: 'note', id, removed: false });
  }

  async search(query: IndexQuery): Promise<IndexHit[]> {
    await this.whenReady();
    // The queue holds chats' message refreshes, which change no note: the prompt's recall of
    // notes (every owner turn) does not wait behind the other chats' turns for them.
    if (!query.notesOnly) {
      // A message search finds the messages of replies under way too.
      for (const [chatId, ids] of this.unread)
        this.queueChange(chatId, 'reply-started', ids);
      this.unread.clear();
      await this.refreshing;
    }
    // A refresh may have started a new build (a secret changed): its result, not the old index.
    await this.whenReady();
    const table = this.table;
    // No note: a notes-only search (the prompt's recall, every owner turn) would rank every
    // message, then again with typos, to accept none of them.
    if (query.notesOnly && !table.noteCount) return [];
    const accept = this.slotAcceptor(query, table);
    const terms = words(query.text)
      .map((word) => indexTerm(word))
      .filter((term): term is string => !!term);
    // Only the head can reach the answer: the recency boost moves a hit by at most RECENCY_WEIGHT.
    const top = Math.max(query.limit * 4, TIE_WINDOW * 2);
    const options = {
      terms,
      top,
      prefix: prefixOf,
      weights: WEIGHTS,
      accept,
    };
    // Exact words and prefixes first; typo tolerance only when they find too little (it costs the most).
    let found = this.ranking.rank(this.store, {
      ...options,
      fuzzy: () => false,
    });
    if (found.length < query.limit)
      found = this.ranking.rank(this.store, { ...options, fuzzy: fuzzyOf });
    const hits: IndexHit[] = [];
    for (const result of found) {
      const doc = table.view(result.id);
      if (!doc) continue;
      const age = Math.max(0, query.now - doc.date);
      let score =
        result.score *
        (1 + RECENCY_WEIGHT * Math.pow(0.5, age / RECENCY_HALF_LIFE_MS));
      if (doc.kind === 'note' && table.note(result.id)?.supersededBy)
        score *= SUPERSEDED_FACTOR;
      hits.push({
        kind: doc.kind,
        id: doc.id,
        chatId: doc.chatId,
        date: doc.date,
        score,
        terms: result.terms,
      });
    }
    hits.sort((a, b) => b.score - a.score || b.date - a.date);
    return keepSuccessorsFirst(newerFirstOnTies(hits), (id) => {
      const slot = table.slotOf('note', id);
      return slot === undefined
        ? null
        : (table.note(slot)?.supersededBy ?? null);
    }).slice(0, query.limit);
  }

  /**
   * Reads the given messages by `_id` (the one filter FerretDB answers from its index) and puts them
   * in the index: a turn's messages, named by its `chats.changed` events, without a scan of the chat.
   */
  private async readMessages(
    chatId: string,
    ids: string[],
    known: IndexedMessage[] = [],
  ): Promise<void> {
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
    const scrub = await this.secrets.scrubber();
    const valid = ids.filter((id) => Types.ObjectId.isValid(id));
    const given = new Map(known.map((m) => [String(m._id), m]));
    // Through the driver (nothing for mongoose to cast or hydrate), for those the turn did not hand over.
    const found = await Promise.all(
      valid.map(
        (id) =>
          given.get(id.toLowerCase()) ??
          this.messages.collection.findOne<IndexedMessage>(
            { _id: new Types.ObjectId(id) },
            { projection: MESSAGE_FIELDS },
          ),
      ),
    );
    for (const [i, message] of found.entries()) {
      if (message) this.putMessage(chatId, message, scrub);
      else {
        const slot = this.table.slotOf('message', String(valid[i]));
        if (slot !== undefined) this.dropSlot(slot);
      }
    }
  }

  private putMessage(
    chatId: string,
    message: IndexedMessage,
    scrub: (text: string) => string,
  ): void {
    const id = String(message._id);
    const old = this.table.slotOf('message', id);
    if (old !== undefined && this.table.isIndexed(old)) this.store.discard(old);
    const text = searchableText(message, scrub);
    const slot = this.table.setMessage(
      id,
      chatId,
      new Date(message.createdAt).getTime(),
      message.role === 'user',
      !!text,
    );
    if (text) this.store.add(slot, text);
    this.changed({ kind: 'message', id, removed: !text, text });
  }

  private dropChat(chatId: string): void {
    for (const slot of this.table.messagesOf(chatId)) this.dropSlot(slot);
    this.chatKinds.delete(chatId);
  }

  private async refreshChat(chatId: string): Promise<void> {
    for (const slot of this.table.messagesOf(chatId)) this.dropSlot(slot);
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
    const scrub = await this.secrets.scrubber();
    const messages = await this.messages
      .find({ chatId: oid }, MESSAGE_FIELDS)
      .lean<IndexedMessage[]>()
      .exec();
    for (const message of messages) this.putMessage(chatId, message, scrub);
  }

  private dropSlot(slot: number): void {
    const doc = this.table.view(slot);
    if (this.table.isIndexed(slot)) this.store.discard(slot);
    this.table.remove(slot);
    if (doc) this.changed({ kind: doc.kind, id: doc.id, removed: true });
  }
}

/** A message's text as the index holds it: none for another version of a message, off the chat's shown path. */
function searchableText(
  message: IndexedMessage,
  scrub: (text: string) => string,
): string {
  if (message.hiddenWith) return '';
  return message.content?.trim() ? scrub(message.content) : '';
}

/** Which secrets a snapshot's text was cleaned of (a digest: the values never reach the disk). */
function hashSecrets(known: readonly string[]): string {
  const hash = createHash('sha256');
  for (const secret of [...new Set(known)].sort())
    hash.update(secret).update('\0');
  return hash.digest('hex');
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
export function keepSuccessorsFirst(
  hits: IndexHit[],
  successorOf: (noteId: string) => string | null,
): IndexHit[] {
  const position = new Map(
    hits.filter((h) => h.kind === 'note').map((h, i) => [h.id, i]),
  );
  if (position.size < 2) return hits;
  const out = [...hits];
  for (const hit of hits) {
    if (hit.kind !== 'note') continue;
    const successor = successorOf(hit.id);
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
