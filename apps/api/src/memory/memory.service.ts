import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  MEMORY_NOTE_MAX_LENGTH,
  MEMORY_QUERY_MAX_LENGTH,
  MEMORY_SEARCH_MAX_LIMIT,
  type MemoryMessageSource,
  type MemoryNoteView,
  type MemorySearchResult,
  type MemorySource,
  type MemoryVersion,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import type { TurnSource } from '../llm/turn-source';
import { KnownSecrets } from '../secrets/known-secrets';
import { asContactText } from '../chats/contact-chat';
import { MessageRecord, ON_PATH } from '../chats/schemas/message.schema';
import { decodeParts } from '../chats/stored-parts';
import { fuseHits } from './embeddings/hybrid-rank';
import { MemoryEmbeddings } from './embeddings/memory-embeddings';
import { MemoryIndex, type IndexHit, type IndexQuery } from './memory-index';
import { MemoryNoteRecord } from './memory-note.schema';
import { carriesMeaning, isStrongHit, meaningfulTerms } from './recall-query';
import {
  sourceOfMessage,
  turnThirdPartySource,
  type TurnToolCall,
} from './turn-provenance';
import { VisibleChats } from './visible-chats';

/** The turn a tool call comes from. */
export interface MemoryTurn {
  source: TurnSource;
  chatId: string | null;
  /** The assistant message being written. */
  messageId: string | null;
}

export interface RememberInput {
  text: string;
  sourceMessageIds?: string[];
  /** The note this one replaces (update by superseding). */
  replaces?: string;
}

export interface SearchInput {
  query: string;
  limit: number;
  since?: Date;
  until?: Date;
}

export type NoteUpdater = 'owner' | 'ai' | 'consolidation';

/** A search result's text at most (a long message is cut; the chat holds the rest). */
const RESULT_TEXT_MAX = 600;
/** Tokens of notes recalled into an owner's prompt at most (about four characters a token). */
export const RECALL_MAX_TOKENS = 400;
const RECALL_MAX_NOTES = 8;
/** A recall begun at a message's acceptance is taken over by its prompt within this long. */
const RECALL_PLAN_TTL_MS = 10_000;
/** Recalls begun and not yet taken over, at most (turns that failed before their prompt). */
const RECALL_PLANS_MAX = 32;
/** Hits taken from each list (keywords, vectors) into the fusion. */
const FUSION_DEPTH = 50;

const MESSAGE_FIELDS = {
  chatId: 1,
  role: 1,
  author: 1,
  trigger: 1,
  content: 1,
  createdAt: 1,
  hiddenWith: 1,
} as const;
type FoundMessage = Pick<
  MessageRecord,
  | '_id'
  | 'chatId'
  | 'role'
  | 'author'
  | 'trigger'
  | 'content'
  | 'createdAt'
  | 'hiddenWith'
>;

/** A recall under way: begun when the message was accepted, finished when its prompt is built. */
interface RecallPlan {
  /** `performance.now()` at its start: the embedding wait counts from here. */
  startedAt: number;
  keyword: Promise<IndexHit[]>;
  /** The keyword hits' notes, by id. */
  notes: Promise<Map<string, MemoryNoteRecord>>;
  vector: Promise<Float32Array | null>;
}

/**
 * The owner's memory notes: written by `remember` (the owner's words become notes,
 * anyone else's only proposals the owner approves), edited by superseding or by the
 * owner, forgotten for good; and the search over notes and every chat the owner may see.
 */
@Injectable()
export class MemoryService {
  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly index: MemoryIndex,
    private readonly visible: VisibleChats,
    private readonly secrets: KnownSecrets,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly embeddings: MemoryEmbeddings,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.recallWaitMs = config.memoryEmbeddings.recallWaitMs;
  }

  /**
   * How long an owner's turn waits for its message's embedding before recalling notes by keywords
   * alone (MEMORY_RECALL_WAIT_MS, well under MEMORY_EMBEDDING_TIMEOUT_MS: every turn would pay a
   * slow provider's wait).
   */
  private readonly recallWaitMs: number;

  /** Recalls begun at a message's acceptance, by the message's text. */
  private readonly plans = new Map<string, RecallPlan>();

  async list(limit = 200): Promise<MemoryNoteView[]> {
    const notes = await this.notes
      .find()
      .sort({ observedAt: -1 })
      .limit(limit)
      .lean<MemoryNoteRecord[]>()
      .exec();
    return notes.map(toNoteView);
  }

  async get(id: string): Promise<MemoryNoteView> {
    return toNoteView(await this.find(id));
  }

  /**
   * A new note from a turn. Refused in a reply to a contact. The owner's own words
   * (the turn's message, or cited messages the owner wrote) make an active note;
   * a contact's, a job's or a tool's words, or a turn that read third-party content,
   * make a proposal the owner approves in the console.
   */
  async remember(
    input: RememberInput,
    turn: MemoryTurn,
  ): Promise<{ note: MemoryNoteView; proposed: boolean }> {
    if (turn.source === 'auto-reply')
      throw new BadRequestException(
        'Notes cannot be written while replying to a contact: only the owner decides what is remembered.',
      );
    const text = await this.cleanText(input.text);
    const replaced = input.replaces ? await this.find(input.replaces) : null;
    if (replaced?.status === 'proposed')
      throw new BadRequestException(
        `Note ${input.replaces} is a proposal the owner has not approved; it cannot be replaced.`,
      );
    const cited = await this.citedMessages(input.sourceMessageIds ?? []);
    const sources: MemorySource[] = cited.map((m) => sourceOfMessage(m));
    let chatId = cited[0]?.chatId.toHexString() ?? turn.chatId;
    let messageIds = cited.map((m) => m._id.toHexString());
    if (turn.source === 'cron' || turn.source === 'pulse') sources.push('tool');
    else if (!cited.length && turn.chatId) {
      const own = await this.turnUserMessage(turn);
      if (own) {
        messageIds = [own._id.toHexString()];
        chatId = turn.chatId;
        sources.push(sourceOfMessage(own));
      }
    }
    const thirdParty = await this.turnThirdParty(turn);
    if (thirdParty) sources.push(thirdParty);
    const source = sources.find((s) => s !== 'owner') ?? 'owner';
    const proposed = source !== 'owner';
    const now = this.clock.now();
    const record = await this.notes.create({
      text,
      source,
      trust: proposed ? 'third-party' : 'owner',
      status: proposed ? 'proposed' : 'active',
      chatId: chatId ?? null,
      messageIds,
      observedAt: now,
      supersedes: replaced ? replaced._id.toHexString() : null,
      supersededBy: null,
      expiresAt: null,
      history: [],
      createdAt: now,
      updatedAt: now,
    });
    const note = record.toObject<MemoryNoteRecord>();
    if (!proposed && replaced) await this.supersede(replaced, note, 'ai');
    this.index.putNote(note);
    this.announce(note._id.toHexString(), 'created', 'ai');
    return { note: toNoteView(note), proposed };
  }

  /** The owner's (or consolidation's) edit: new text (the prior version kept), approval, expiry. */
  async update(
    id: string,
    change: { text?: string; approve?: boolean; expiresAt?: Date | null },
    by: NoteUpdater,
  ): Promise<MemoryNoteView> {
    const note = await this.find(id);
    const now = this.clock.now();
    const set: Partial<MemoryNoteRecord> = { updatedAt: now };
    const history = [...(note.history ?? [])];
    if (change.text !== undefined) {
      const text = await this.cleanText(change.text);
      if (text !== note.text) {
        history.push({
          text: note.text,
          at: now,
          reason: `edited by ${by === 'owner' ? 'the owner' : by}`,
          by,
        });
        set.text = text;
      }
    }
    const approving = change.approve === true && note.status === 'proposed';
    if (approving) {
      set.status = 'active';
      set.trust = 'owner';
      history.push({
        text: set.text ?? note.text,
        at: now,
        reason: `approved by the owner (said by: ${note.source})`,
        by,
      });
    }
    if (change.expiresAt !== undefined) set.expiresAt = change.expiresAt;
    set.history = history;
    await this.notes.updateOne({ _id: note._id }, { $set: set }).exec();
    const updated = { ...note, ...set } as MemoryNoteRecord;
    if (approving && note.supersedes) {
      const old = await this.notes
        .findById(note.supersedes)
        .lean<MemoryNoteRecord>()
        .exec();
      if (old) await this.supersede(old, updated, by);
    }
    this.index.putNote(updated);
    this.announce(id, 'updated', by);
    return toNoteView(updated);
  }

  /** The owner's approval: a proposal becomes a note (recalled and searched). */
  async approve(id: string): Promise<MemoryNoteView> {
    const note = await this.find(id);
    if (note.status !== 'proposed')
      throw new ConflictException(
        `Note ${id} is not a proposal waiting for approval (it is ${note.status}).`,
      );
    return this.update(id, { approve: true }, 'owner');
  }

  /** The owner's refusal of a proposal: it is gone, never remembered. */
  async discard(id: string): Promise<void> {
    const note = await this.find(id);
    if (note.status !== 'proposed')
      throw new ConflictException(
        `Note ${id} is not a proposal (it is ${note.status}): forget it with DELETE instead.`,
      );
    await this.forget(id, 'owner');
  }

  /** Gone for good: the note, its prior versions, and its place in search and recall. */
  async forget(id: string, by: NoteUpdater): Promise<void> {
    const note = await this.find(id);
    await this.notes.deleteOne({ _id: note._id }).exec();
    this.index.removeNote(id);
    await this.embeddings.forget('note', id);
    await this.notes
      .updateMany({ supersedes: id }, { $set: { supersedes: null } })
      .exec();
    this.announce(id, 'deleted', by);
  }

  /** Notes and messages matching `query`, best first; a contact's text is fenced. */
  async search(input: SearchInput): Promise<MemorySearchResult[]> {
    const query = checkQuery(input.query);
    if (
      !Number.isInteger(input.limit) ||
      input.limit < 1 ||
      input.limit > MEMORY_SEARCH_MAX_LIMIT
    )
      throw new BadRequestException(
        `limit must be a whole number from 1 to ${MEMORY_SEARCH_MAX_LIMIT}`,
      );
    if (input.since && input.until && input.since > input.until)
      throw new BadRequestException('since must not be after until');
    const chatVisible = await this.visible.predicate();
    const indexQuery: IndexQuery = {
      text: query,
      limit: input.limit,
      since: input.since?.getTime(),
      until: input.until?.getTime(),
      chatVisible,
      now: this.clock.now().getTime(),
    };
    // The query's embedding is asked while the keyword index answers; without it (no provider,
    // a failure, MEMORY_EMBEDDING_TIMEOUT_MS passed) the keyword hits are the answer.
    const [keyword, vector] = await Promise.all([
      this.index.search({
        ...indexQuery,
        limit: Math.max(input.limit, FUSION_DEPTH),
      }),
      this.embeddings.queryVector(query),
    ]);
    if (!vector) return this.hydrate(keyword.slice(0, input.limit));
    const accept = this.index.acceptor(indexQuery);
    const neighbours = this.embeddings.nearest(vector, FUSION_DEPTH, accept);
    return this.hydrate(
      fuseHits(keyword, neighbours, {
        describe: (kind, id) => this.index.describe(kind, id),
        successorOf: (id) => this.index.successorOf(id),
        limit: input.limit,
      }),
    );
  }

  /**
   * Begins the recall of an owner's message as soon as it is accepted (TURN_ACCEPTED), so its
   * keyword hits and its embedding call run beside the turn's other work; `recall()` of the
   * same text takes it over. Cheap and idempotent: a repeated text starts nothing new.
   */
  prepareRecall(message: string): void {
    const query = recallQuery(message);
    if (!query || this.plans.has(query)) return;
    if (this.plans.size >= RECALL_PLANS_MAX)
      this.plans.delete(this.plans.keys().next().value as string);
    this.plans.set(query, this.planRecall(query));
  }

  /**
   * The active notes most relevant to an owner's message, within RECALL_MAX_TOKENS: keyword hits
   * fused with the nearest notes by meaning when the message's embedding arrives within
   * MEMORY_RECALL_WAIT_MS of the recall's start (the message's acceptance when the turn
   * announced it); later, failed, not asked (`recallVector`) or without a provider, the keyword
   * hits alone, so a slow provider never holds the turn longer than that.
   * Messages are never recalled, by either half.
   */
  async recall(message: string): Promise<MemoryNoteView[]> {
    const query = recallQuery(message);
    if (!query) return [];
    const plan = this.takePlan(query) ?? this.planRecall(query);
    const [keyword, notes] = await Promise.all([plan.keyword, plan.notes]);
    const vector = await within(
      plan.vector,
      Math.max(0, plan.startedAt + this.recallWaitMs - performance.now()),
    );
    const indexQuery = recallIndexQuery(query, this.clock.now().getTime());
    const hits = vector
      ? fuseHits(
          keyword,
          this.embeddings.nearest(
            vector,
            RECALL_MAX_NOTES * 2,
            this.index.acceptor(indexQuery),
          ),
          {
            describe: (kind, id) => this.index.describe(kind, id),
            successorOf: (id) => this.index.successorOf(id),
            limit: RECALL_MAX_NOTES * 2,
          },
        ).filter((hit) => hit.kind === 'note')
      : keyword;
    if (!hits.length) return [];
    const unread = hits.map((h) => h.id).filter((id) => !notes.has(id));
    for (const note of await this.notesById(unread))
      notes.set(note._id.toHexString(), note);
    // A note forgotten or expired since the recall began is left out (forget acts at once).
    const accept = this.index.acceptor(indexQuery);
    const out: MemoryNoteView[] = [];
    let budget = RECALL_MAX_TOKENS * 4;
    for (const hit of hits) {
      const note = notes.get(hit.id);
      if (!note || note.status !== 'active' || !accept('note', hit.id))
        continue;
      const cost = recallCost(note);
      if (cost > budget) continue;
      budget -= cost;
      out.push(toNoteView(note));
      if (out.length >= RECALL_MAX_NOTES) break;
    }
    return out;
  }

  private takePlan(query: string): RecallPlan | undefined {
    const plan = this.plans.get(query);
    this.plans.delete(query);
    return plan && performance.now() - plan.startedAt < RECALL_PLAN_TTL_MS
      ? plan
      : undefined;
  }

  private planRecall(query: string): RecallPlan {
    const startedAt = performance.now();
    const keyword = this.index.search(
      recallIndexQuery(query, this.clock.now().getTime()),
    );
    const notes = keyword
      .then((hits) => this.notesById(hits.map((h) => h.id)))
      .then((found) => new Map(found.map((n) => [n._id.toHexString(), n])));
    const vector = this.recallVector(query, keyword, notes);
    // A plan whose turn ended before its prompt (a failed store, a stop) is never awaited.
    for (const promise of [keyword, notes, vector]) promise.catch(() => null);
    return { startedAt, keyword, notes, vector };
  }

  /**
   * The message's embedding when it can change what is recalled, else null with no call:
   * not when no note has a vector, not for a message without meaning of its own
   * (`carriesMeaning`: "ok thanks", one word), and not when the keyword hits already fill the
   * recall with strong hits (each matching the message's content words, `isStrongHit`).
   * A vector cached for the same words costs no call either (`queryVector`).
   */
  private async recallVector(
    query: string,
    keyword: Promise<IndexHit[]>,
    notes: Promise<Map<string, MemoryNoteRecord>>,
  ): Promise<Float32Array | null> {
    if (!this.embeddings.hasNoteVectors() || !carriesMeaning(query))
      return null;
    const hits = await keyword;
    const terms = meaningfulTerms(query);
    if (
      hits.length &&
      isStrongHit(hits[0].terms, terms) &&
      strongHitsFill(hits, await notes, terms)
    )
      return null;
    return this.embeddings.queryVector(query);
  }

  private notesById(ids: readonly string[]): Promise<MemoryNoteRecord[]> {
    return ids.length
      ? byIds<MemoryNoteRecord>(this.noteModel(), ids)
      : Promise.resolve([]);
  }

  private async hydrate(hits: IndexHit[]): Promise<MemorySearchResult[]> {
    const noteIds = hits.filter((h) => h.kind === 'note').map((h) => h.id);
    const messageIds = hits
      .filter((h) => h.kind === 'message')
      .map((h) => h.id);
    const [notes, messages, scrub] = await Promise.all([
      byIds<MemoryNoteRecord>(this.noteModel(), noteIds),
      byIds<FoundMessage>(this.messageModel(), messageIds, MESSAGE_FIELDS),
      this.secrets.scrubber(),
    ]);
    const noteById = new Map(notes.map((n) => [n._id.toHexString(), n]));
    const messageById = new Map(messages.map((m) => [m._id.toHexString(), m]));
    const results: MemorySearchResult[] = [];
    for (const hit of hits) {
      const score = Math.round(hit.score * 1000) / 1000;
      if (hit.kind === 'note') {
        const note = noteById.get(hit.id);
        if (!note) continue;
        results.push({
          kind: 'note',
          id: hit.id,
          text: scrub(note.text),
          date: new Date(note.observedAt).toISOString(),
          chatId: note.chatId ?? null,
          ...(note.messageIds?.[0] ? { messageId: note.messageIds[0] } : {}),
          source: note.source,
          score,
        });
        continue;
      }
      const message = messageById.get(hit.id);
      // Another version of a message (off the chat's shown path) is not found, even before the index drops it.
      if (!message || message.hiddenWith) continue;
      const text = cut(scrub(message.content ?? ''));
      results.push({
        kind: 'message',
        id: hit.id,
        text: message.author ? asContactText(message.author, text) : text,
        date: new Date(message.createdAt).toISOString(),
        chatId: message.chatId.toHexString(),
        messageId: hit.id,
        source: messageSource(message),
        score,
      });
    }
    return results;
  }

  private async supersede(
    old: MemoryNoteRecord,
    successor: MemoryNoteRecord,
    by: NoteUpdater,
  ): Promise<void> {
    const now = this.clock.now();
    const set = {
      status: 'superseded' as const,
      supersededBy: successor._id.toHexString(),
      updatedAt: now,
      history: [
        ...(old.history ?? []),
        {
          text: old.text,
          at: now,
          reason: `superseded by a newer note: ${successor.text.slice(0, 120)}`,
          by,
        },
      ],
    };
    await this.notes.updateOne({ _id: old._id }, { $set: set }).exec();
    this.index.putNote({ ...old, ...set });
    this.announce(old._id.toHexString(), 'updated', by);
  }

  private async citedMessages(ids: readonly string[]): Promise<FoundMessage[]> {
    if (!ids.length) return [];
    const unique = [...new Set(ids.map((id) => id.trim()))];
    for (const id of unique)
      if (!Types.ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id))
        throw new BadRequestException(`'${id}' is not a message id`);
    const found = await byIds<FoundMessage>(
      this.messageModel(),
      unique,
      MESSAGE_FIELDS,
    );
    await this.index.whenReady();
    const chatVisible = await this.visible.predicate();
    const visible = found.filter((m) => chatVisible(m.chatId.toHexString()));
    if (visible.length !== unique.length) {
      const seen = new Set(visible.map((m) => m._id.toHexString()));
      const missing = unique.filter((id) => !seen.has(id.toLowerCase()));
      throw new BadRequestException(
        `No message with the id ${missing.join(', ')}: nothing was saved.`,
      );
    }
    return visible;
  }

  /** The owner's message that started this turn (the user message just before the reply). */
  private async turnUserMessage(
    turn: MemoryTurn,
  ): Promise<FoundMessage | null> {
    if (!turn.chatId || !Types.ObjectId.isValid(turn.chatId)) return null;
    await this.index.whenReady();
    const indexed = this.index.userMessageBefore(turn.chatId, turn.messageId);
    if (indexed) {
      const [found] = await byIds<FoundMessage>(
        this.messageModel(),
        [indexed],
        MESSAGE_FIELDS,
      );
      if (found) return found;
    }
    // Not indexed yet (the turn's own message is read when its reply starts): ask the database.
    const filter: Record<string, unknown> = {
      chatId: new Types.ObjectId(turn.chatId),
      role: 'user',
      ...ON_PATH,
    };
    if (turn.messageId && Types.ObjectId.isValid(turn.messageId))
      filter['_id'] = { $lt: new Types.ObjectId(turn.messageId) };
    return this.messages
      .findOne(filter, MESSAGE_FIELDS)
      .sort({ _id: -1 })
      .lean<FoundMessage>()
      .exec();
  }

  private noteModel(): Model<never> {
    return this.notes as unknown as Model<never>;
  }

  private messageModel(): Model<never> {
    return this.messages as unknown as Model<never>;
  }

  /** What third-party content the turn read before this call (its stored tool calls), or that its chat is a contact's. */
  private async turnThirdParty(turn: MemoryTurn): Promise<MemorySource | null> {
    if (turn.chatId) {
      await this.index.whenReady();
      const kind = this.index.kindOf(turn.chatId);
      if (kind === 'whatsapp' || kind === 'telegram') return 'contact';
    }
    if (!turn.messageId || !Types.ObjectId.isValid(turn.messageId)) return null;
    const reply = await this.messages
      .findById(turn.messageId, { parts: 1 })
      .lean<Pick<MessageRecord, 'parts'>>()
      .exec();
    const calls: TurnToolCall[] = decodeParts(reply?.parts).flatMap((part) =>
      part.type === 'tool_call'
        ? [{ name: part.name, result: part.result, taint: part.taint }]
        : [],
    );
    return turnThirdPartySource(calls);
  }

  private async cleanText(raw: string): Promise<string> {
    const scrub = await this.secrets.scrubber();
    const text = scrub(raw.replace(/\s+/g, ' ').trim());
    if (!text) throw new BadRequestException('A note needs some text.');
    if (text.length > MEMORY_NOTE_MAX_LENGTH)
      throw new BadRequestException(
        `A note is at most ${MEMORY_NOTE_MAX_LENGTH} characters (this one has ${text.length}): keep one short fact per note.`,
      );
    return text;
  }

  private async find(id: string): Promise<MemoryNoteRecord> {
    const clean = String(id).trim();
    const note = /^[0-9a-f]{24}$/i.test(clean)
      ? await this.notes.findById(clean).lean<MemoryNoteRecord>().exec()
      : null;
    if (!note)
      throw new NotFoundException(`No memory note with the id ${clean}`);
    return note;
  }

  private announce(
    id: string,
    change: 'created' | 'updated' | 'deleted',
    by: NoteUpdater,
  ): void {
    this.events.emit('memories.changed', {
      id,
      change,
      by,
      at: this.clock.now().toISOString(),
    });
  }
}

/**
 * Documents by id, one `_id` equality each: FerretDB answers only that from its index
 * (an `$in` reads the whole collection, 100,000 messages after a year).
 */
async function byIds<T>(
  model: Model<never>,
  ids: readonly string[],
  projection?: Record<string, 1>,
): Promise<T[]> {
  const found = await Promise.all(
    ids
      .filter((id) => /^[0-9a-f]{24}$/i.test(id))
      .map((id) =>
        (model as unknown as Model<T>)
          .findById(id, projection)
          .lean<T>()
          .exec(),
      ),
  );
  return found.filter((d): d is NonNullable<typeof d> => !!d) as T[];
}

function recallQuery(message: string): string {
  return message.trim().slice(0, MEMORY_QUERY_MAX_LENGTH);
}

function recallIndexQuery(query: string, now: number): IndexQuery {
  return {
    text: query,
    limit: RECALL_MAX_NOTES * 2,
    notesOnly: true,
    chatVisible: () => false,
    now,
  };
}

/** Characters a note takes of the recall's budget (its text and the line around it). */
function recallCost(note: MemoryNoteRecord): number {
  return note.text.length + 40;
}

/**
 * Whether the keyword hits, in their order, fill the recall (RECALL_MAX_NOTES notes, or one
 * that no longer fits the token budget) before any weak hit: a vector could only add a note
 * the budget has no room for.
 */
function strongHitsFill(
  hits: readonly IndexHit[],
  notes: ReadonlyMap<string, MemoryNoteRecord>,
  terms: readonly string[],
): boolean {
  let budget = RECALL_MAX_TOKENS * 4;
  let count = 0;
  for (const hit of hits) {
    const note = notes.get(hit.id);
    if (!note || note.status !== 'active') continue;
    if (!isStrongHit(hit.terms, terms)) return false;
    const cost = recallCost(note);
    if (cost > budget) return true;
    budget -= cost;
    if (++count >= RECALL_MAX_NOTES) return true;
  }
  return false;
}

export function checkQuery(raw: unknown): string {
  const query = typeof raw === 'string' ? raw.trim() : '';
  if (!query) throw new BadRequestException('The query must not be empty.');
  if (query.length > MEMORY_QUERY_MAX_LENGTH)
    throw new BadRequestException(
      `The query is at most ${MEMORY_QUERY_MAX_LENGTH} characters.`,
    );
  return query;
}

function cut(text: string): string {
  return text.length > RESULT_TEXT_MAX
    ? `${text.slice(0, RESULT_TEXT_MAX - 1)}…`
    : text;
}

function messageSource(message: FoundMessage): MemoryMessageSource {
  if (message.author) return 'contact';
  if (message.trigger) return message.trigger;
  return message.role === 'user' ? 'owner' : 'assistant';
}

export function toNoteView(note: MemoryNoteRecord): MemoryNoteView {
  const iso = (d: Date | null | undefined) =>
    d ? new Date(d).toISOString() : null;
  return {
    id: note._id.toHexString(),
    text: note.text,
    source: note.source,
    trust: note.trust,
    status: note.status,
    chatId: note.chatId ?? null,
    messageIds: note.messageIds ?? [],
    observedAt: new Date(note.observedAt).toISOString(),
    supersedes: note.supersedes ?? null,
    supersededBy: note.supersededBy ?? null,
    expiresAt: iso(note.expiresAt),
    history: (note.history ?? []).map(
      (v): MemoryVersion => ({ ...v, at: new Date(v.at).toISOString() }),
    ),
    createdAt: new Date(note.createdAt).toISOString(),
    updatedAt: new Date(note.updatedAt).toISOString(),
  };
}

/** The promise's value if it settles within `ms`, else null (it runs on; its result is dropped here). */
async function within<T>(
  promise: Promise<T | null>,
  ms: number,
): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
