import { Clock } from '../../clock/clock';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes } from 'node:crypto';
import { Binary, type Collection } from 'mongodb';
import type { Model } from 'mongoose';
import { BudgetRefusal } from '../../budget/budget-refusal';
import { BudgetService, type SpendHold } from '../../budget/budget.service';
import { MessageRecord } from '../../chats/schemas/message.schema';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { KnownSecrets } from '../../secrets/known-secrets';
import { REDACTED_SECRET } from '../../secrets/secret-redaction';
import { SettingsService } from '../../settings/settings.service';
import { UsageRecorder } from '../../usage/usage-recorder';
import { MemoryIndex, type IndexChange } from '../memory-index';
import { MemoryNoteRecord } from '../memory-note.schema';
import { VisibleChats } from '../visible-chats';
import { atQuietMoment, eventLoopUse } from '../../boot/quiet-moment';
import { MAX_UPDATES_PER_COMMAND } from '../../database/grouped-updates';
import { DUPLICATE_KEY } from '../../database/duplicate-key';
import { insertUnordered } from '../../database/unordered-insert';
import {
  EMBEDDING_TEXT_MAX,
  embedTexts,
  embeddingModelFor,
  estimateTokens,
  sameModel,
  type EmbeddingModel,
  type EmbeddingResult,
} from './embedding-client';
import {
  keyParts,
  vectorKey,
  VectorTable,
  type Neighbour,
  type VectorKey,
} from './vector-table';

/** One stored embedding (`memory_embeddings`), keyed `n:<noteId>` / `m:<messageId>`. */
export interface EmbeddingDoc {
  _id: VectorKey;
  kind: 'note' | 'message';
  ref: string;
  provider: 'openai' | 'gemini';
  model: string;
  dims: number;
  /** FNV-1a of the text sent: an edited text is embedded again, an unchanged one is not. */
  hash: number;
  /** Float32, little-endian. */
  vector: Binary;
  at: Date;
}

export const EMBEDDINGS_COLLECTION = 'memory_embeddings';
/**
 * Which secrets the stored vectors were last checked against (`memory_index`, scoped and left out of
 * backups like the vectors): a salted digest, never a value.
 */
const SECRETS_STATE = { collection: 'memory_index', id: 'embeddings-secrets' };
/** Texts read per batch when checking every vector after a secret change. */
const SECRET_CHECK_BATCH = 2000;
/** Texts scrubbed between two turns of the event loop (about 35 µs each: a slice stays under ~20 ms). */
const SECRET_CHECK_SLICE = 500;

/** Texts per provider call: small enough that a call is quick and a refusal cheap. */
/**
 * The cosine a vector-only hit needs: the nearest vectors always exist, related or not (unrelated
 * texts sit around 0–0.2 with the providers' small models, paraphrases well above); below it a
 * hit is noise, and the keyword side still finds what shares words.
 */
const MIN_SIMILARITY = 0.25;
const BATCH = 64;
const DOCUMENT_TIMEOUT_MS = 30_000;
/** A pass after writes waits this long, so a burst of messages is one batch. */
const DEBOUNCE_MS = 2_000;
/** Then for a quiet moment (boot/quiet-moment.ts), this long at most: a busy server still embeds. */
const PASS_QUIET_MAX_WAIT_MS = 10_000;
/** After a failed call, the next attempt waits this long (doubling up to the maximum). */
const RETRY_MS = 60_000;
const RETRY_MAX_MS = 30 * 60_000;
/** After the budget refused, embedding waits this long (or for a settings change). */
const BUDGET_PAUSE_MS = 15 * 60_000;
const QUERY_CACHE_TTL_MS = 10 * 60_000;
const FULL_SCAN_EVERY_MS = 60 * 60_000;
const QUERY_CACHE_MAX = 200;

export interface EmbeddingStatus {
  /** `openai/text-embedding-3-small`, or null (keyword search only). */
  model: string | null;
  vectors: number;
  /** Why embedding is paused (the budget, a failing provider), or null. */
  paused: string | null;
  running: boolean;
}

/**
 * The vector half of memory search. In the background, in batches, it embeds the notes
 * and messages the memory index holds (messages only of chats search may show; secrets
 * scrubbed, each text cut to EMBEDDING_TEXT_MAX) with the owner's OpenAI or Gemini key,
 * each call held to the budget and counted as usage source `memory`; a refusal or a failing
 * provider pauses it, never the app. Vectors are kept in `memory_embeddings` and, for the
 * current model, in a `VectorTable` in memory; another model (a changed key or provider)
 * starts a new table, filled again lazily. A document the index drops (a forgotten note, a
 * deleted chat or message) loses its vector at once, in memory and in the database.
 */
@Injectable()
export class MemoryEmbeddings
  implements OnApplicationBootstrap, OnModuleDestroy
{
  private readonly logger = new Logger(MemoryEmbeddings.name);
  private model: EmbeddingModel | null = null;
  private table: VectorTable | null = null;
  private loading: Promise<void> | null = null;
  /** Documents the index put since the last pass (new, or their text compared by hash). */
  private readonly pending = new Set<VectorKey>();
  /** The text the index gave with a pending message (secrets already scrubbed): no read of it again. */
  private pendingTexts = new Map<VectorKey, string>();
  /**
   * The next pass compares every indexed document with the table (at start, after a model
   * change, a restore, a settings change, a pause, and hourly for chats that became visible);
   * other passes take only `pending`, so a turn's messages cost no scan of 100,000 documents.
   */
  private fullScan = true;
  private lastFullScan = 0;
  /** Cancels the pass that waits for its time and a quiet moment. */
  private timer: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private pausedUntil = 0;
  private pauseReason: string | null = null;
  private retryMs = RETRY_MS;
  /** Database writes and deletes in order (a delete never overtaken by a late write). */
  private writes: Promise<unknown> = Promise.resolve();
  private readonly queries = new Map<
    string,
    { vector: Float32Array; at: number }
  >();
  /** Query embeddings whose call is out, by cache key. */
  private readonly asking = new Map<string, Promise<Float32Array | null>>();
  private abort = new AbortController();
  /** The salted digest of the secrets the vectors were last checked against (read once from the database). */
  private checked: { salt: string; digest: string } | null | undefined;

  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly index: MemoryIndex,
    private readonly visible: VisibleChats,
    private readonly secrets: KnownSecrets,
    private readonly settings: SettingsService,
    private readonly budget: BudgetService,
    private readonly usage: UsageRecorder,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.index.watch((change) => this.onIndexChange(change));
    // A document dropped as stale while the index was rebuilt (a secret changed) is embedded again by this scan.
    this.index.onBuilt(() => {
      this.fullScan = true;
      this.schedule(DEBOUNCE_MS);
    });
    this.schedule(0);
  }

  onModuleDestroy(): void {
    this.stopped = true;
    this.abort.abort();
    this.timer?.();
  }

  private collection(): Collection<EmbeddingDoc> {
    return this.notes.db.collection<EmbeddingDoc>(EMBEDDINGS_COLLECTION);
  }

  status(): EmbeddingStatus {
    return {
      model: this.model ? `${this.model.provider}/${this.model.model}` : null,
      vectors: this.table?.size ?? 0,
      paused:
        this.pauseReason && this.clock.now().getTime() < this.pausedUntil
          ? this.pauseReason
          : null,
      running: this.running !== null,
    };
  }

  /** Runs passes until nothing is left to embed (tests and the bench; resolves early when paused). */
  async settle(): Promise<void> {
    // A note written while the index saves a snapshot reaches it (and this) when the save is done;
    // a build a secret change started is finished first.
    await this.index.idle();
    for (let i = 0; i < 10_000; i++) {
      if (this.timer) {
        this.timer();
        this.timer = null;
      }
      await this.run();
      if (!this.again || this.status().paused) return;
    }
  }

  /** Drops a document's vector now, in memory and in the database (forget). */
  async forget(kind: 'note' | 'message', id: string): Promise<void> {
    this.drop(vectorKey(kind, id));
    await this.writes;
  }

  /** Whether any note has a vector of the loaded model (recall by meaning can find nothing otherwise). */
  hasNoteVectors(): boolean {
    return (this.table?.notes ?? 0) > 0;
  }

  /**
   * The query's vector, or null: no provider, no vectors yet, refused, failed or too slow (keyword
   * search then). A text asked again within QUERY_CACHE_TTL_MS, or while its call is still out
   * (a turn's recall, then its memory_search of the same words), costs no second call.
   */
  async queryVector(text: string): Promise<Float32Array | null> {
    const model = await this.currentModel();
    if (!model || !this.model || !sameModel(model, this.model)) return null;
    if (!this.table?.size) return null;
    const cacheKey = `${model.provider}/${model.model}\n${text}`;
    const cached = this.queries.get(cacheKey);
    if (cached && this.clock.now().getTime() - cached.at < QUERY_CACHE_TTL_MS)
      return cached.vector;
    const asked = this.asking.get(cacheKey);
    if (asked) return asked;
    const asking = this.embedQuery(model, text, cacheKey).finally(() =>
      this.asking.delete(cacheKey),
    );
    this.asking.set(cacheKey, asking);
    return asking;
  }

  private async embedQuery(
    model: EmbeddingModel,
    text: string,
    cacheKey: string,
  ): Promise<Float32Array | null> {
    const scrub = await this.secrets.scrubber();
    // A secret in a query carries no meaning to search by, and its placeholder would find every
    // text that held one: it is taken out, not replaced. Nothing left: keyword search alone.
    const clean = withoutPlaceholders(scrub(text)).slice(0, EMBEDDING_TEXT_MAX);
    if (!clean.trim()) return null;
    const timeoutMs = this.config.memoryEmbeddings.queryTimeoutMs;
    const result = await this.call(model, [clean], 'query', timeoutMs).catch(
      (error: Error) => {
        this.logger.warn(
          `Memory search by keywords only: the query embedding failed (${error.message})`,
        );
        return null;
      },
    );
    if (!result) return null;
    const vector = result.vectors[0];
    if (this.queries.size >= QUERY_CACHE_MAX)
      this.queries.delete(this.queries.keys().next().value as string);
    this.queries.set(cacheKey, { vector, at: this.clock.now().getTime() });
    return vector;
  }

  /** The documents nearest to `vector` that `accept` lets through, best first. */
  nearest(
    vector: Float32Array,
    limit: number,
    accept: (kind: 'note' | 'message', id: string) => boolean,
  ): Array<Neighbour & { kind: 'note' | 'message'; id: string }> {
    if (!this.table) return [];
    return this.table
      .nearest(vector, limit, (key) => {
        const { kind, id } = keyParts(key);
        return accept(kind, id);
      })
      .filter((n) => n.similarity >= MIN_SIMILARITY)
      .map((n) => ({ ...n, ...keyParts(n.key) }));
  }

  @OnEvent('settings.updated')
  onSettingsUpdated(): void {
    // A new key, provider or budget: try again now. A cached query vector may be of a text
    // holding a secret saved now.
    this.queries.clear();
    this.pausedUntil = 0;
    this.pauseReason = null;
    this.retryMs = RETRY_MS;
    this.fullScan = true;
    this.schedule(DEBOUNCE_MS);
  }

  /**
   * An email or calendar password, an MCP server's values or OAuth tokens (a sign-in shows as a status
   * change): secrets too. The next pass compares the secrets with those its vectors were checked against.
   */
  @OnEvent('accounts.changed')
  @OnEvent('mcp.changed')
  onSecretsMayChange(): void {
    this.schedule(DEBOUNCE_MS);
  }

  @OnEvent('budget.changed')
  onBudgetChanged(): void {
    if (this.pauseReason?.startsWith('budget')) {
      this.pausedUntil = 0;
      this.pauseReason = null;
      this.schedule(DEBOUNCE_MS);
    }
  }

  @OnEvent('backup.restored')
  onRestored(): void {
    // The restored database has its own notes and messages: its vectors are read again.
    this.table = null;
    this.model = null;
    this.checked = undefined;
    this.fullScan = true;
    this.schedule(DEBOUNCE_MS);
  }

  private onIndexChange(change: IndexChange): void {
    const key = vectorKey(change.kind, change.id);
    if (change.removed) {
      this.drop(key);
      return;
    }
    this.pending.add(key);
    if (change.text !== undefined) this.pendingTexts.set(key, change.text);
    else this.pendingTexts.delete(key);
    this.schedule(DEBOUNCE_MS);
  }

  private drop(key: VectorKey): void {
    this.pending.delete(key);
    this.pendingTexts.delete(key);
    this.table?.delete(key);
    this.enqueueWrite(() => this.collection().deleteOne({ _id: key }));
  }

  private enqueueWrite(write: () => Promise<unknown>): Promise<unknown> {
    this.writes = this.writes.then(write).catch((error: Error) => {
      if (!this.stopped)
        this.logger.warn(`Memory embeddings not written: ${error.message}`);
    });
    return this.writes;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(
      delayMs,
      this.pausedUntil - this.clock.now().getTime(),
    );
    // At a quiet moment: a pass (the provider's answer read, the vectors stored) takes the CPU from
    // the turns in flight, and a burst of turns is when most messages wait to be embedded.
    this.timer = atQuietMoment(
      () => {
        this.timer = null;
        void this.run();
      },
      wait,
      eventLoopUse(),
      PASS_QUIET_MAX_WAIT_MS,
    );
  }

  private run(): Promise<void> {
    this.running ??= (async () => {
      this.again = false;
      try {
        await this.pass();
      } catch (error) {
        if (!this.stopped && this.notes.db.readyState === 1)
          this.logger.warn(
            `Memory embedding pass failed: ${(error as Error).message}`,
          );
      } finally {
        this.running = null;
      }
      if (this.again) this.schedule(DEBOUNCE_MS);
    })();
    return this.running;
  }

  private async currentModel(): Promise<EmbeddingModel | null> {
    return embeddingModelFor(
      await this.settings.get(),
      this.config.memoryEmbeddings,
    );
  }

  /** The vectors of `model` from the database, once per model. */
  private async load(model: EmbeddingModel): Promise<void> {
    if (this.model && this.table && sameModel(model, this.model)) {
      this.model = model; // the key may have changed; its vectors have not
      return;
    }
    this.loading ??= (async () => {
      const table = new VectorTable(model.dimensions);
      table.reserve(await this.collection().estimatedDocumentCount());
      const cursor = this.collection()
        .find(
          { model: model.model, dims: model.dimensions },
          { projection: { vector: 1, hash: 1 } },
        )
        .batchSize(2000);
      let read = 0;
      // One scratch vector: the documents' bytes are read in place (no copy of 100,000 buffers).
      const floats = new Float32Array(model.dimensions);
      for await (const doc of cursor) {
        const bytes = doc.vector.buffer;
        if (bytes.byteLength !== model.dimensions * 4) continue;
        const view = new DataView(
          bytes.buffer,
          bytes.byteOffset,
          bytes.byteLength,
        );
        for (let i = 0; i < floats.length; i++)
          floats[i] = view.getFloat32(i * 4, true);
        table.set(doc._id, floats, doc.hash);
        if (++read % 2000 === 0)
          await new Promise((resolve) => setImmediate(resolve));
      }
      this.table = table;
      this.model = model;
      this.fullScan = true;
      this.queries.clear();
      this.logger.log(
        `Memory embeddings: ${table.size} vectors of ${model.provider}/${model.model} loaded`,
      );
    })().finally(() => (this.loading = null));
    await this.loading;
  }

  private async pass(): Promise<void> {
    if (this.stopped || this.clock.now().getTime() < this.pausedUntil) return;
    const model = await this.currentModel();
    if (!model) {
      this.model = null;
      this.table = null;
      return;
    }
    await this.index.whenReady();
    await this.load(model);
    const table = this.table as VectorTable;
    const visible = await this.visible.predicate();
    const embeddable = (kind: 'note' | 'message', chatId: string | null) =>
      kind === 'note' || (chatId !== null && visible(chatId));
    // Before anything is embedded: vectors made from a text holding a secret known since are dropped,
    // and their documents embedded again from the scrubbed text (in this pass, with the others).
    const stale = await this.dropVectorsOfNewSecrets();
    for (const [key, text] of stale) {
      this.pending.add(key);
      this.pendingTexts.set(key, text);
    }
    const todo: VectorKey[] = [];
    if (
      this.fullScan ||
      this.clock.now().getTime() - this.lastFullScan > FULL_SCAN_EVERY_MS
    ) {
      this.fullScan = false;
      this.lastFullScan = this.clock.now().getTime();
      const live = new Set<VectorKey>();
      for (const doc of this.index.documents()) {
        const key = vectorKey(doc.kind, doc.id);
        live.add(key);
        if (!embeddable(doc.kind, doc.chatId)) continue;
        if (!table.has(key) || this.pending.has(key)) todo.push(key);
      }
      // Vectors of documents the index no longer holds (removed while the app was down).
      for (const key of [...table.keyList()])
        if (!live.has(key)) this.drop(key);
    } else
      for (const key of this.pending) {
        const { kind, id } = keyParts(key);
        const doc = this.index.describe(kind, id);
        if (doc && embeddable(kind, doc.chatId)) todo.push(key);
      }
    this.pending.clear();
    const known = this.pendingTexts;
    this.pendingTexts = new Map();
    for (let i = 0; i < todo.length; i += BATCH) {
      if (this.stopped || this.table !== table) return;
      const ok = await this.embedBatch(
        model,
        table,
        todo.slice(i, i + BATCH),
        known,
      );
      if (!ok) {
        // Paused: what is left is taken up again (an edited text too, which a scan would not see).
        for (const key of todo.slice(i)) this.pending.add(key);
        return;
      }
      // The event loop runs between batches: embedding a year of messages never holds a request.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.retryMs = RETRY_MS;
  }

  /** One provider call; false when embedding must pause (refused, failing). */
  private async embedBatch(
    model: EmbeddingModel,
    table: VectorTable,
    keys: VectorKey[],
    known: ReadonlyMap<VectorKey, string>,
  ): Promise<boolean> {
    const scrub = await this.secrets.scrubber();
    const texts = await Promise.all(
      keys.map((key) => known.get(key) ?? this.textOf(key)),
    );
    const items: Array<{ key: VectorKey; text: string; hash: number }> = [];
    for (const [i, key] of keys.entries()) {
      const raw = texts[i];
      if (!raw?.trim()) continue;
      const text = scrub(raw).slice(0, EMBEDDING_TEXT_MAX);
      const hash = fnv1a(text);
      if (table.has(key) && table.textHash(key) === hash) continue;
      items.push({ key, text, hash });
    }
    if (!items.length) return true;
    let result: EmbeddingResult;
    try {
      result = await this.call(
        model,
        items.map((item) => item.text),
        'document',
        DOCUMENT_TIMEOUT_MS,
      );
    } catch (error) {
      if (error instanceof BudgetRefusal) {
        this.pause(`budget: ${error.message}`, BUDGET_PAUSE_MS);
        return false;
      }
      if (this.stopped) return false;
      this.pause(
        `the embedding provider failed: ${(error as Error).message}`,
        this.retryMs,
      );
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      return false;
    }
    const now = this.clock.now();
    const fresh: EmbeddingDoc[] = [];
    const again: EmbeddingDoc[] = [];
    for (const [i, item] of items.entries()) {
      const { kind, id } = keyParts(item.key);
      // Forgotten while the call was out: it is not stored again.
      if (!this.index.describe(kind, id) || this.table !== table) continue;
      const vector = result.vectors[i];
      // The table holds every stored vector of this model: a key it lacks is new.
      (table.has(item.key) ? again : fresh).push({
        _id: item.key,
        kind,
        ref: id,
        provider: model.provider,
        model: model.model,
        dims: model.dimensions,
        hash: item.hash,
        vector: new Binary(
          Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
        ),
        at: now,
      });
      table.set(item.key, vector, item.hash);
    }
    if (fresh.length)
      await this.enqueueWrite(async () =>
        this.replace(await this.insertNew(fresh)),
      );
    if (again.length) await this.enqueueWrite(() => this.replace(again));
    return true;
  }

  /**
   * New vectors in one `insert`: the embedded database stores them in one transaction, where an
   * upsert costs each one a look-up and a transaction of its own. Returns those whose key is
   * already taken (another model's vector, after a switch), to be replaced.
   */
  private async insertNew(docs: EmbeddingDoc[]): Promise<EmbeddingDoc[]> {
    const refused = await insertUnordered(this.collection(), docs);
    const other = refused.find((e) => e.code !== DUPLICATE_KEY);
    if (other) throw new Error(other.errmsg ?? `error ${other.code}`);
    return refused.map((e) => docs[e.index]);
  }

  private async replace(docs: EmbeddingDoc[]): Promise<void> {
    // In commands of at most MAX_UPDATES_PER_COMMAND, so that no other command waits long behind one.
    for (let at = 0; at < docs.length; at += MAX_UPDATES_PER_COMMAND) {
      await this.collection().bulkWrite(
        docs
          .slice(at, at + MAX_UPDATES_PER_COMMAND)
          .map(({ _id, ...replacement }) => ({
            replaceOne: { filter: { _id }, replacement, upsert: true },
          })),
        { ordered: false },
      );
    }
  }

  private pause(reason: string, ms: number): void {
    this.pausedUntil = this.clock.now().getTime() + ms;
    this.pauseReason = reason;
    this.fullScan = true;
    this.logger.warn(
      `Memory embedding paused for ${Math.round(ms / 60_000)} min: ${reason}`,
    );
    this.schedule(ms);
  }

  /** One provider call held to the budget (usage source `memory`) and counted. */
  private async call(
    model: EmbeddingModel,
    texts: string[],
    purpose: 'document' | 'query',
    timeoutMs: number,
  ): Promise<EmbeddingResult> {
    const guarded = {
      source: 'memory' as const,
      modelId: model.model,
      provider: model.provider,
    };
    const held: SpendHold = await this.budget.hold(guarded, {
      inputTokens: estimateTokens(texts),
      outputTokens: 0,
    });
    let result: EmbeddingResult;
    try {
      result = await embedTexts(
        model,
        texts,
        purpose,
        AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]),
        timeoutMs,
      );
    } catch (error) {
      await held.release();
      throw error;
    }
    // Counted off the search's path: the vector is what the caller waits for.
    void this.usage
      .record({ ...guarded, model: model.model, usage: result.usage })
      .then(() => held.settle(result.usage))
      .catch((error: Error) =>
        this.logger.warn(`Embedding usage not counted: ${error.message}`),
      );
    return result;
  }

  /**
   * When the secrets held changed since the vectors were last checked (a key, an auth profile value,
   * a password saved; checked at every pass, and at start against the digest in the database):
   * every stored vector's text is read again and scrubbed with the secrets held now. A text the
   * scrubber changes whose scrubbed form is not what was sent (the stored hash) was embedded before
   * a secret in it was known: its vector is dropped at once, in memory and in the database, and its
   * scrubbed text returned to be embedded again. The others keep their vectors (no call).
   */
  private async dropVectorsOfNewSecrets(): Promise<Map<VectorKey, string>> {
    const stale = new Map<VectorKey, string>();
    const values = await this.secrets.values();
    this.checked ??= await this.readChecked();
    if (
      this.checked &&
      secretsDigest(values, this.checked.salt) === this.checked.digest
    )
      return stale;
    const scrub = await this.secrets.scrubber();
    const hashes = new Map<VectorKey, number>();
    for await (const doc of this.collection()
      .find({}, { projection: { hash: 1 } })
      .batchSize(SECRET_CHECK_BATCH))
      hashes.set(doc._id, doc.hash);
    const check = (key: VectorKey, raw: string | null | undefined): void => {
      const hash = hashes.get(key);
      if (hash === undefined || !raw?.trim()) return;
      const clean = scrub(raw);
      // No secret held now in it: whatever its vector was made from holds none either.
      if (clean === raw) return;
      const text = clean.slice(0, EMBEDDING_TEXT_MAX);
      if (fnv1a(text) !== hash) stale.set(key, text);
    };
    if (hashes.size) {
      // Through the driver: nothing for mongoose to cast, per text of 100,000.
      for await (const note of this.notes.collection.find<
        Pick<MemoryNoteRecord, '_id' | 'text'>
      >({}, { projection: { text: 1 }, batchSize: SECRET_CHECK_BATCH }))
        check(vectorKey('note', note._id.toHexString()), note.text);
      let read = 0;
      for await (const message of this.messages.collection.find<
        Pick<MessageRecord, '_id' | 'content'>
      >({}, { projection: { content: 1 }, batchSize: SECRET_CHECK_BATCH })) {
        check(vectorKey('message', String(message._id)), message.content);
        if (++read % SECRET_CHECK_SLICE === 0)
          await new Promise((resolve) => setImmediate(resolve));
      }
    }
    for (const key of stale.keys()) this.drop(key);
    this.queries.clear();
    const salt = randomBytes(16).toString('hex');
    const checked = { salt, digest: secretsDigest(values, salt) };
    // Only once the stale vectors are gone from the database: a crash before this checks again.
    await this.enqueueWrite(() =>
      this.notes.db
        .collection<{
          _id: string;
          salt: string;
          digest: string;
        }>(SECRETS_STATE.collection)
        .updateOne(
          { _id: SECRETS_STATE.id },
          { $set: checked },
          { upsert: true },
        ),
    );
    this.checked = checked;
    if (stale.size)
      this.logger.log(
        `Memory embeddings: ${stale.size} vectors made before a secret in their text was known dropped, to be embedded again scrubbed`,
      );
    return stale;
  }

  private async readChecked(): Promise<{
    salt: string;
    digest: string;
  } | null> {
    const state = await this.notes.db
      .collection<{
        _id: string;
        salt?: unknown;
        digest?: unknown;
      }>(SECRETS_STATE.collection)
      .findOne({ _id: SECRETS_STATE.id });
    return typeof state?.salt === 'string' && typeof state.digest === 'string'
      ? { salt: state.salt, digest: state.digest }
      : null;
  }

  private async textOf(key: VectorKey): Promise<string | null> {
    const { kind, id } = keyParts(key);
    if (kind === 'note') {
      const note = await this.notes
        .findById(id, { text: 1, status: 1 })
        .lean<Pick<MemoryNoteRecord, 'text' | 'status'>>()
        .exec();
      return note && note.status !== 'proposed' ? note.text : null;
    }
    const message = await this.messages
      .findById(id, { content: 1 })
      .lean<Pick<MessageRecord, 'content'>>()
      .exec();
    return message?.content ?? null;
  }
}

/** Which secrets are held, as a salted digest (what is stored never tells a value). */
function secretsDigest(values: readonly string[], salt: string): string {
  const hash = createHash('sha256').update(salt).update('\0');
  for (const secret of [...new Set(values)].sort())
    hash.update(secret).update('\0');
  return hash.digest('hex');
}

/** A scrubbed query without the scrubber's placeholders (`[redacted secret]`, a credential's `[redacted]`). */
function withoutPlaceholders(text: string): string {
  return text.split(REDACTED_SECRET).join(' ').split('[redacted]').join(' ');
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}
