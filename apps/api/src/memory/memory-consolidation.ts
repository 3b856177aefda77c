import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { DateTime } from 'luxon';
import { Types, type Model } from 'mongoose';
import type {
  MemoryChangeSource,
  MemoryRunChange,
  MemoryRunModelOutcome,
  MemoryRunView,
} from '@metatronos/shared-types';
import { BudgetRefusal } from '../budget/budget-refusal';
import { ChatRecord } from '../chats/schemas/chat.schema';
import { MessageRecord } from '../chats/schemas/message.schema';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import {
  ModelJsonClient,
  ModelUnavailableError,
} from '../files/plan/model-json-client';
import { KnownSecrets } from '../secrets/known-secrets';
import { SettingsService } from '../settings/settings.service';
import {
  consolidationRequest,
  readModelAnswer,
  type ModelPlan,
  type ModelNote,
  type OwnerLine,
} from './consolidation-model';
import {
  MAX_REMOVED_SHARE,
  planConsolidation,
  type ConsolidationPlan,
} from './consolidation-plan';
import { MemoryIndex } from './memory-index';
import { MemoryNoteRecord } from './memory-note.schema';
import { MemoryRunRecord } from './memory-run.schema';

/** How often the schedule is looked at; the run itself is nightly. */
const CHECK_INTERVAL_MS = 15 * 60_000;
/** The owner's local hour the run happens in. */
const RUN_HOUR = 3;
/** No second run within this long of the last one. */
const MIN_GAP_MS = 20 * 3_600_000;
/** The owner's lines of "the day" when there was no run before. */
const DAY_MS = 86_400_000;
/** Notes shown to the model at most (the day's new ones and their neighbours first): one call stays small. */
const MODEL_NOTES_MAX = 300;
/** The owner's messages shown at most (the newest). */
const MODEL_LINES_MAX = 150;
/** Neighbours looked up per new note, so a paraphrase of an old note is seen beside it. */
const NEIGHBOURS = 5;
/** The model call is given up after this long (the run then records the failure). */
const MODEL_TIMEOUT_MS = 120_000;

/** Why a run is made. */
export type RunTrigger = MemoryRunView['trigger'];

/** A run asked while another runs. */
export class ConsolidationRunning extends Error {
  constructor() {
    super('A memory consolidation is already running.');
  }
}

interface ModelPart {
  outcome: MemoryRunModelOutcome;
  reason: string | null;
  error: string | null;
  plan: ModelPlan | null;
}

type Note = MemoryNoteRecord;

/**
 * The nightly consolidation (03:00 in the owner's zone, or now from the console).
 * The plain-text pass (`planConsolidation`) merges duplicates with the same words and
 * drops expired notes, without a model. Then, when a model is configured and the budget
 * lets the call out (usage source `memory`, an unattended source), one call sees the
 * notes and the owner's own messages of the day (never a contact's, a mail's, a web
 * page's or a tool's text) and may merge paraphrases, resolve contradictions by recency
 * (the newer note supersedes the older, both kept with their sources) and propose new
 * facts, which wait for the owner's approval. The answer is checked against a zod schema
 * and the notes and messages it was given: anything off and none of it is applied (the
 * run records why). A budget refusal or no model skips that part with the reason; the
 * plain part still runs. A run removing more than a quarter of the notes, the model's
 * merges included, is refused and changes nothing. Each change keeps its reason, the
 * prior text and its sources in `memory_runs`; a merged note's text stays in the kept
 * note's history.
 */
@Injectable()
export class MemoryConsolidation
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger(MemoryConsolidation.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<MemoryRunView> | null = null;
  private readonly stopping = new AbortController();

  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MemoryRunRecord.name)
    private readonly runs: Model<MemoryRunRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    @InjectModel(ChatRecord.name)
    private readonly chats: Model<ChatRecord>,
    private readonly index: MemoryIndex,
    private readonly settings: SettingsService,
    private readonly model: ModelJsonClient,
    private readonly secrets: KnownSecrets,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(
      () => void this.runIfDue().catch(() => undefined),
      CHECK_INTERVAL_MS,
    );
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
  }

  async latest(): Promise<MemoryRunView | null> {
    const run = await this.runs
      .findOne()
      .sort({ startedAt: -1 })
      .lean<MemoryRunRecord>()
      .exec();
    return run ? toRunView(run) : null;
  }

  isRunning(): boolean {
    return this.running !== null;
  }

  async runIfDue(): Promise<MemoryRunView | null> {
    const now = this.clock.now();
    const { timezone } = await this.settings.get();
    if (DateTime.fromJSDate(now).setZone(timezone).hour !== RUN_HOUR)
      return null;
    const last = await this.latest();
    if (last && now.getTime() - Date.parse(last.startedAt) < MIN_GAP_MS)
      return null;
    if (this.running) return null;
    return this.run('schedule');
  }

  /** One run; a call during a run waits for it. */
  run(trigger: RunTrigger = 'owner'): Promise<MemoryRunView> {
    this.running ??= this.pass(trigger).finally(() => (this.running = null));
    return this.running;
  }

  /** One run started now; ConsolidationRunning when one is under way. */
  runNow(): Promise<MemoryRunView> {
    if (this.running) throw new ConsolidationRunning();
    return this.run('owner');
  }

  private async pass(trigger: RunTrigger): Promise<MemoryRunView> {
    const startedAt = this.clock.now();
    const previous = await this.latest();
    const all = await this.notes.find().lean<Note[]>().exec();
    const byId = new Map(all.map((n) => [n._id.toHexString(), n]));
    const plan = planConsolidation(
      all.map((n) => ({
        id: n._id.toHexString(),
        text: n.text,
        source: n.source,
        status: n.status,
        observedAt: new Date(n.observedAt),
        expiresAt: n.expiresAt ? new Date(n.expiresAt) : null,
      })),
      startedAt,
    );
    const record = (
      outcome: 'done' | 'refused',
      reason: string | null,
      model: ModelPart,
      changes: MemoryRunChange[],
    ) =>
      this.record({
        startedAt,
        trigger,
        outcome,
        reason,
        notesBefore: all.length,
        model,
        changes,
      });
    if (plan.refusal) {
      this.logger.warn(`Memory consolidation refused: ${plan.refusal}`);
      return record(
        'refused',
        plan.refusal,
        skipped('The run was refused before the model was asked.'),
        [],
      );
    }
    const since = previous
      ? new Date(previous.startedAt)
      : new Date(startedAt.getTime() - DAY_MS);
    const model = await this.askModel(all, plan, since, startedAt);
    const modelRemoved = (model.plan?.merges ?? []).reduce(
      (sum, m) => sum + m.drop.length,
      0,
    );
    const removed = plan.changes.length + modelRemoved;
    if (all.length > 0 && removed / all.length > MAX_REMOVED_SHARE) {
      const reason = `The run would remove ${removed} of ${all.length} notes (more than a quarter, ${modelRemoved} of them merged by the model); nothing was changed.`;
      this.logger.warn(`Memory consolidation refused: ${reason}`);
      return record('refused', reason, model, []);
    }
    const changes = await this.applyPlain(plan, byId, startedAt);
    if (model.plan)
      changes.push(...(await this.applyModel(model.plan, byId, startedAt)));
    return record('done', null, model, changes);
  }

  /** The model's part: skipped (with why), failed (with why; nothing of it applied) or a checked plan. */
  private async askModel(
    all: readonly Note[],
    plain: ConsolidationPlan,
    since: Date,
    now: Date,
  ): Promise<ModelPart> {
    const settings = await this.settings.get();
    if (!settings.primaryModel)
      return skipped('No model is configured: only the plain-text pass ran.');
    const gone = new Set(plain.changes.map((c) => c.noteId));
    const active = all.filter(
      (n) =>
        n.status === 'active' &&
        !gone.has(n._id.toHexString()) &&
        (!n.expiresAt || new Date(n.expiresAt).getTime() > now.getTime()),
    );
    const notes = await this.notesForModel(active, since, now);
    const lines = await this.ownerLines(since);
    if (notes.length < 2 && !lines.length)
      return skipped('Nothing new to look at: the model was not asked.');
    const request = consolidationRequest(notes, lines);
    const signal = AbortSignal.any([
      this.stopping.signal,
      AbortSignal.timeout(MODEL_TIMEOUT_MS),
    ]);
    let raw: unknown;
    try {
      raw = await this.model.ask({
        settings,
        system: request.system,
        user: request.user,
        signal,
        source: 'memory',
      });
    } catch (error) {
      if (
        error instanceof BudgetRefusal ||
        error instanceof ModelUnavailableError
      )
        return skipped(`The model was not asked: ${error.message}`);
      return failed(`The model call failed: ${(error as Error).message}`);
    }
    const read = readModelAnswer(
      raw,
      request,
      all.map((n) => n.text),
    );
    if (!read.ok) {
      this.logger.warn(`Memory consolidation: ${read.error}`);
      return failed(`${read.error}; nothing the model proposed was applied.`);
    }
    return { outcome: 'done', reason: null, error: null, plan: read.plan };
  }

  /**
   * All active notes when they are few; else the day's new notes, their nearest notes by
   * search (so a paraphrase of an old note is seen beside it), then the newest, up to the cap.
   */
  private async notesForModel(
    active: readonly Note[],
    since: Date,
    now: Date,
  ): Promise<ModelNote[]> {
    const view = (n: Note): ModelNote => ({
      id: n._id.toHexString(),
      text: n.text,
      observedAt: new Date(n.observedAt),
    });
    if (active.length <= MODEL_NOTES_MAX) return active.map(view);
    const byId = new Map(active.map((n) => [n._id.toHexString(), n]));
    const newest = [...active].sort(
      (a, b) =>
        new Date(b.observedAt).getTime() - new Date(a.observedAt).getTime(),
    );
    const chosen = new Set<string>();
    for (const note of newest) {
      if (new Date(note.updatedAt).getTime() < since.getTime()) break;
      if (chosen.size >= MODEL_NOTES_MAX) break;
      chosen.add(note._id.toHexString());
      const hits = await this.index.search({
        text: note.text.slice(0, 400),
        limit: NEIGHBOURS,
        notesOnly: true,
        chatVisible: () => false,
        now: now.getTime(),
      });
      for (const hit of hits)
        if (byId.has(hit.id) && chosen.size < MODEL_NOTES_MAX)
          chosen.add(hit.id);
    }
    for (const note of newest) {
      if (chosen.size >= MODEL_NOTES_MAX) break;
      chosen.add(note._id.toHexString());
    }
    return [...chosen].map((id) => view(byId.get(id) as Note));
  }

  /**
   * The owner's own messages since `since`: typed in the owner's chats (kind `chat`), with no
   * contact author and no job or Pulse trigger. Never a contact's, a job's, the assistant's
   * or a tool's text: a fact planted in a mail or a web page cannot reach the proposals.
   */
  private async ownerLines(since: Date): Promise<OwnerLine[]> {
    const owned = new Set(
      (
        await this.chats
          .find({}, { kind: 1 })
          .lean<Array<Pick<ChatRecord, '_id' | 'kind'>>>()
          .exec()
      )
        .filter((c) => (c.kind ?? 'chat') === 'chat')
        .map((c) => String(c._id)),
    );
    const found = await this.messages
      .find(
        {
          _id: {
            $gt: Types.ObjectId.createFromTime(
              Math.floor(since.getTime() / 1000),
            ),
          },
          role: 'user',
        },
        { chatId: 1, role: 1, author: 1, trigger: 1, content: 1, createdAt: 1 },
      )
      .sort({ _id: -1 })
      .limit(MODEL_LINES_MAX * 4)
      .lean<
        Array<
          Pick<
            MessageRecord,
            | '_id'
            | 'chatId'
            | 'role'
            | 'author'
            | 'trigger'
            | 'content'
            | 'createdAt'
          >
        >
      >()
      .exec();
    const scrub = await this.secrets.scrubber();
    const lines: OwnerLine[] = [];
    for (const m of found) {
      if (m.author || m.trigger || m.role !== 'user') continue;
      if (!owned.has(String(m.chatId))) continue;
      const text = scrub((m.content ?? '').replace(/\s+/g, ' ').trim());
      if (!text) continue;
      lines.push({
        id: String(m._id),
        chatId: String(m.chatId),
        text,
        at: new Date(m.createdAt),
      });
      if (lines.length >= MODEL_LINES_MAX) break;
    }
    return lines.reverse();
  }

  private async applyPlain(
    plan: ConsolidationPlan,
    byId: Map<string, Note>,
    at: Date,
  ): Promise<MemoryRunChange[]> {
    const changes: MemoryRunChange[] = [];
    for (const { keep, drop } of plan.merges) {
      const merged = await this.merge(
        byId.get(keep.id) as Note,
        drop.map((d) => byId.get(d.id) as Note),
        at,
        (dropped) =>
          `merged a duplicate (said by ${dropped.source} on ${day(dropped.observedAt)})`,
      );
      for (const note of drop)
        changes.push({
          ...(plan.changes.find(
            (c) => c.noteId === note.id && c.action === 'merged',
          ) as MemoryRunChange),
          after: merged.text,
          relatedNoteId: keep.id,
          sources: sourcesOf(merged),
          by: 'rules',
        });
    }
    for (const note of plan.expired) {
      const record = byId.get(note.id) as Note;
      await this.remove(note.id, null);
      changes.push({
        ...(plan.changes.find(
          (c) => c.noteId === note.id && c.action === 'expired',
        ) as MemoryRunChange),
        sources: sourcesOf(record),
        by: 'rules',
      });
    }
    return changes;
  }

  private async applyModel(
    plan: ModelPlan,
    byId: Map<string, Note>,
    at: Date,
  ): Promise<MemoryRunChange[]> {
    const changes: MemoryRunChange[] = [];
    for (const { keep, drop, reason } of plan.merges) {
      const kept = byId.get(keep) as Note;
      const dropped = drop.map((id) => byId.get(id) as Note);
      const merged = await this.merge(
        kept,
        dropped,
        at,
        (d) =>
          `merged a paraphrase (said by ${d.source} on ${day(d.observedAt)}): ${reason}`,
      );
      for (const note of dropped)
        changes.push({
          noteId: note._id.toHexString(),
          action: 'merged',
          reason: `says the same as note ${keep} in other words: ${reason}`,
          prior: note.text,
          after: merged.text,
          relatedNoteId: keep,
          sources: sourcesOf(merged),
          by: 'model',
        });
    }
    for (const { newer, older, reason } of plan.supersedes) {
      const successor = byId.get(newer) as Note;
      const old = byId.get(older) as Note;
      await this.supersede(old, successor, at, reason);
      changes.push({
        noteId: older,
        action: 'superseded',
        reason: `contradicted by the newer note ${newer} (${day(successor.observedAt)}): ${reason}`,
        prior: old.text,
        after: successor.text,
        relatedNoteId: newer,
        sources: [...sourcesOf(old), ...sourcesOf(successor)],
        by: 'model',
      });
    }
    const scrub = await this.secrets.scrubber();
    for (const proposal of plan.proposals) {
      const text = scrub(proposal.text.replace(/\s+/g, ' ').trim());
      if (!text) continue;
      const created = await this.notes.create({
        text,
        source: 'owner',
        trust: 'third-party',
        status: 'proposed',
        chatId: proposal.chatId,
        messageIds: proposal.messageIds,
        observedAt: at,
        supersedes: null,
        supersededBy: null,
        expiresAt: null,
        history: [
          {
            text,
            at,
            reason: `proposed by the nightly consolidation from your own words: ${proposal.reason}`,
            by: 'consolidation',
          },
        ],
        createdAt: at,
        updatedAt: at,
      });
      const note = created.toObject<Note>();
      // A proposal is not searched nor recalled: the index leaves it out until it is approved.
      this.index.putNote(note);
      this.announce(note._id.toHexString(), 'created');
      changes.push({
        noteId: note._id.toHexString(),
        action: 'proposed',
        reason: proposal.reason,
        prior: '',
        after: text,
        relatedNoteId: null,
        sources: sourcesOf(note),
        by: 'model',
      });
    }
    return changes;
  }

  /** Folds `drop` into `kept`: every source and each dropped text (in the kept note's history); the dropped notes go. */
  private async merge(
    kept: Note,
    drop: readonly Note[],
    at: Date,
    why: (dropped: Note) => string,
  ): Promise<Note> {
    const history = [...(kept.history ?? [])];
    const messageIds = new Set(kept.messageIds ?? []);
    for (const dropped of drop) {
      history.push({
        text: dropped.text,
        at,
        reason: why(dropped),
        by: 'consolidation',
      });
      for (const id of dropped.messageIds ?? []) messageIds.add(id);
    }
    const set = { history, messageIds: [...messageIds], updatedAt: at };
    await this.notes.updateOne({ _id: kept._id }, { $set: set }).exec();
    const merged = { ...kept, ...set };
    this.index.putNote(merged);
    for (const dropped of drop)
      await this.remove(dropped._id.toHexString(), kept._id.toHexString());
    this.announce(kept._id.toHexString(), 'updated');
    return merged;
  }

  /** The older of two contradicting notes is kept, as history: superseded by the newer, its sources intact. */
  private async supersede(
    old: Note,
    successor: Note,
    at: Date,
    reason: string,
  ): Promise<void> {
    const oldSet = {
      status: 'superseded' as const,
      supersededBy: successor._id.toHexString(),
      updatedAt: at,
      history: [
        ...(old.history ?? []),
        {
          text: old.text,
          at,
          reason: `superseded by a newer note (${successor.text.slice(0, 120)}): ${reason}`,
          by: 'consolidation' as const,
        },
      ],
    };
    await this.notes.updateOne({ _id: old._id }, { $set: oldSet }).exec();
    this.index.putNote({ ...old, ...oldSet });
    const newSet = { supersedes: old._id.toHexString(), updatedAt: at };
    await this.notes.updateOne({ _id: successor._id }, { $set: newSet }).exec();
    this.index.putNote({ ...successor, ...newSet });
    this.announce(old._id.toHexString(), 'updated');
    this.announce(successor._id.toHexString(), 'updated');
  }

  private async remove(id: string, mergedInto: string | null): Promise<void> {
    await this.notes.deleteOne({ _id: id }).exec();
    this.index.removeNote(id);
    await this.notes
      .updateMany({ supersededBy: id }, { $set: { supersededBy: mergedInto } })
      .exec();
    await this.notes
      .updateMany({ supersedes: id }, { $set: { supersedes: mergedInto } })
      .exec();
    this.announce(id, 'deleted');
  }

  private async record(run: {
    startedAt: Date;
    trigger: RunTrigger;
    outcome: 'done' | 'refused';
    reason: string | null;
    notesBefore: number;
    model: ModelPart;
    changes: MemoryRunChange[];
  }): Promise<MemoryRunView> {
    const created = await this.runs.create({
      startedAt: run.startedAt,
      trigger: run.trigger,
      outcome: run.outcome,
      reason: run.reason,
      notesBefore: run.notesBefore,
      changes: run.changes,
      modelOutcome: run.model.outcome,
      modelReason: run.model.reason,
      error: run.model.error,
    });
    const view = toRunView(created.toObject<MemoryRunRecord>());
    this.events.emit('memories.changed', {
      id: view.id,
      change: 'updated',
      by: 'consolidation',
      at: this.clock.now().toISOString(),
    });
    return view;
  }

  private announce(
    id: string,
    change: 'created' | 'updated' | 'deleted',
  ): void {
    this.events.emit('memories.changed', {
      id,
      change,
      by: 'consolidation',
      at: this.clock.now().toISOString(),
    });
  }
}

function skipped(reason: string): ModelPart {
  return { outcome: 'skipped', reason, error: null, plan: null };
}

function failed(error: string): ModelPart {
  return { outcome: 'failed', reason: null, error, plan: null };
}

function day(at: Date): string {
  return new Date(at).toISOString().slice(0, 10);
}

function sourcesOf(note: Note): MemoryChangeSource[] {
  return (note.messageIds ?? []).map((messageId) => ({
    chatId: note.chatId ?? null,
    messageId,
  }));
}

function toRunView(run: MemoryRunRecord): MemoryRunView {
  return {
    id: run._id.toHexString(),
    startedAt: new Date(run.startedAt).toISOString(),
    outcome: run.outcome,
    reason: run.reason ?? null,
    notesBefore: run.notesBefore,
    changes: run.changes ?? [],
    modelOutcome: run.modelOutcome ?? 'skipped',
    modelReason: run.modelReason ?? null,
    error: run.error ?? null,
    trigger: run.trigger ?? 'schedule',
  };
}
