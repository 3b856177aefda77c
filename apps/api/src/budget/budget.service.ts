import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type mongo } from 'mongoose';
import { DateTime } from 'luxon';
import type {
  BudgetCapName,
  BudgetCaps,
  BudgetState,
  BudgetView,
  ModelProvider,
  TokenUsage,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { ZonedDay } from '../clock/zoned-day';
import { AppEventBus } from '../events/app-event-bus';
import {
  forwardingSink,
  LlmProviderError,
  type LlmAdapter,
  type LlmTurnRequest,
  type LlmToolSpec,
  type LlmTurnSink,
} from '../llm/llm-adapter';
import { isAttended, type TurnSource } from '../llm/turn-source';
import { SettingsService } from '../settings/settings.service';
import { UsageRecorder } from '../usage/usage-recorder';
import { BudgetLedger, type CapRefusal } from './budget-ledger';
import { BudgetRefusal, dollars } from './budget-refusal';
import {
  attachmentTokens,
  costOf,
  priceFor,
  promptTokensOf,
  worstCaseCost,
  type PriceLookup,
} from './model-prices';
import {
  BUDGET_STATE_ID,
  BudgetReservationRecord,
  BudgetStateRecord,
} from './schemas/budget-records.schema';

/** One turn's model calls as the budget sees them. */
export interface GuardedCall {
  source: TurnSource;
  /** The model id as configured (with any `<endpoint>/` prefix). */
  modelId: string;
  provider: ModelProvider;
  /** The owner allowed this one reply over the daily and monthly caps. */
  allowOverBudget?: boolean;
  /** Tokens (input + output, all calls) the turn may use: a job's `maxTokensPerRun`. */
  maxTokens?: number;
}

const CAP_PERIOD: Record<BudgetCapName, 'day' | 'month'> = {
  dailyUsd: 'day',
  monthlyUsd: 'month',
  unattendedDailyUsd: 'day',
};
const SPENT_OF: Record<BudgetCapName, keyof BudgetView['spent']> = {
  dailyUsd: 'todayUsd',
  monthlyUsd: 'monthUsd',
  unattendedDailyUsd: 'unattendedTodayUsd',
};
/**
 * How long a held call runs before its reservation is written to `budget_reservations`: a
 * quicker call (a fast model, a short tool round) settles without a database command.
 */
export const RESERVATION_RECORD_AFTER_MS = 1_000;

const CAP_WORDS: Record<BudgetCapName, string> = {
  dailyUsd: "Today's budget",
  monthlyUsd: "This month's budget",
  unattendedDailyUsd:
    "Today's budget for unattended work (jobs, Pulse, auto-replies)",
};

/**
 * Spend control for every model call: the adapter wrapper that reserves a call's
 * worst case before it goes out and settles it to the reported cost, the pause
 * after a provider's 402, the 80%/100% notices, and the figures of `GET /api/budget`.
 * The ledger lives in this one process; the usage rollups and the reservation
 * records are the durable side.
 */
@Injectable()
export class BudgetService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BudgetService.name);
  private readonly ledger = new BudgetLedger();
  private loading: Promise<void> | null = null;
  private state: {
    paused: BudgetStateRecord['paused'];
    notices: Set<string>;
    askedPrices: Set<string>;
  } = { paused: null, notices: new Set(), askedPrices: new Set() };
  /** The owner's day, with its bounds kept (luxon is not free); the last one, to see a new day. */
  private readonly zonedDay = new ZonedDay();
  private period: string | null = null;
  private lastDay: string | null = null;
  private dayTimer: NodeJS.Timeout | null = null;
  /** Reservation records not written yet: their call has run for less than RESERVATION_RECORD_AFTER_MS. */
  private readonly unwritten = new Map<
    string,
    {
      timer: NodeJS.Timeout;
      record: Omit<BudgetReservationRecord, 'createdAt'>;
    }
  >();
  /** Inserts of reservation records under way or done, by record id (removed with the record). */
  private readonly written = new Map<string, Promise<unknown>>();

  constructor(
    @InjectModel(BudgetReservationRecord.name)
    private readonly reservations: Model<BudgetReservationRecord>,
    @InjectModel(BudgetStateRecord.name)
    private readonly stateModel: Model<BudgetStateRecord>,
    private readonly settings: SettingsService,
    private readonly usage: UsageRecorder,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ready();
    const { timezone } = await this.settings.get();
    this.lastDay = this.today(timezone);
    // A new day lifts the daily caps and the pause: work held back by them is told.
    this.dayTimer = setInterval(() => void this.checkNewDay(), 60_000);
    this.dayTimer.unref();
  }

  onModuleDestroy(): void {
    if (this.dayTimer) clearInterval(this.dayTimer);
    this.dayTimer = null;
    // The app stops: replies were stopped and settled first, and nothing held is left to record.
    for (const { timer } of this.unwritten.values()) clearTimeout(timer);
    this.unwritten.clear();
  }

  /** Announces a new owner's day once (`budget.changed`), so held-back messages are taken again. */
  async checkNewDay(): Promise<void> {
    const { timezone } = await this.settings.get();
    const day = this.today(timezone);
    if (day === this.lastDay) return;
    this.lastDay = day;
    await this.announce(null, null, null);
  }

  /** A restored backup brings other rollups and state: read them again. */
  @OnEvent('backup.restored')
  async reloadAfterRestore(): Promise<void> {
    this.loading = null;
    await this.ready().catch((error: Error) =>
      this.logger.warn(`Could not reload the budget: ${error.message}`),
    );
  }

  /** Loads once: reservations a crash left are charged, then the spend of the last weeks and the state. */
  ready(): Promise<void> {
    if (!this.loading) {
      this.loading = this.load();
      this.loading.catch(() => (this.loading = null));
    }
    return this.loading;
  }

  private async load(): Promise<void> {
    const left = await this.reservations.find().lean().exec();
    for (const reservation of left) {
      await this.usage.record(
        {
          source: reservation.source,
          model: reservation.model,
          provider: reservation.provider,
          usage: undefined,
          costUsd: reservation.costUsd,
        },
        { day: reservation.day },
      );
      await this.reservations.deleteOne({ _id: reservation._id }).exec();
    }
    if (left.length)
      this.logger.warn(
        `${left.length} model call reservation(s) left by a stop were charged at their worst case (${dollars(left.reduce((sum, r) => sum + r.costUsd, 0))}).`,
      );
    const { timezone } = await this.settings.get();
    const since = DateTime.fromJSDate(this.clock.now(), { zone: timezone })
      .minus({ days: 40 })
      .toISODate() as string;
    const rows = await this.usage.spendSince(since);
    const ledger = this.ledger;
    ledger.forgetBefore('9999');
    for (const row of rows)
      ledger.add(
        row.day,
        row.costUsd,
        row.source !== 'chat' && row.source !== 'voice',
      );
    const stored = await this.stateModel
      .findById(BUDGET_STATE_ID)
      .lean()
      .exec();
    this.state = {
      paused: stored?.paused ?? null,
      notices: new Set(stored?.notices ?? []),
      askedPrices: new Set(stored?.askedPrices ?? []),
    };
  }

  /** The owner's day now (`YYYY-MM-DD`). */
  private today(zone: string): string {
    const day = this.zonedDay.of(this.clock.now().getTime(), zone);
    if (this.period !== null && this.period !== day)
      this.ledger.forgetBefore(previousMonthStart(day));
    this.period = day;
    return day;
  }

  private pausedOn(day: string): boolean {
    return this.state.paused !== null && this.state.paused.day === day;
  }

  async view(): Promise<BudgetView> {
    await this.ready();
    const { budget, timezone } = await this.settings.get();
    const day = this.today(timezone);
    const spent = roundSpent(this.ledger.spent(day));
    const date = DateTime.fromISO(day);
    const projected =
      date.day > 0 ? (spent.monthUsd / date.day) * (date.daysInMonth ?? 30) : 0;
    return {
      caps: { ...budget },
      spent,
      reservedUsd: round(this.ledger.reservedUsd),
      paused:
        this.state.paused && this.pausedOn(day)
          ? {
              since: new Date(this.state.paused.since).toISOString(),
              reason: this.state.paused.reason,
            }
          : null,
      state: this.stateOf(budget, day),
      day,
      month: day.slice(0, 7),
      projectedMonthUsd: round(projected),
    };
  }

  private stateOf(caps: BudgetCaps, day: string): BudgetState {
    if (this.pausedOn(day)) return 'paused';
    const spent = this.ledger.spent(day);
    let state: BudgetState = 'ok';
    for (const cap of Object.keys(SPENT_OF) as BudgetCapName[]) {
      const limit = caps[cap];
      if (limit === null) continue;
      const used = spent[SPENT_OF[cap]];
      if (used >= limit && (limit > 0 || used > 0)) return 'exceeded';
      if (limit > 0 && used >= 0.8 * limit) state = 'warning';
    }
    return state;
  }

  /** Ends the pause after a provider's 402. */
  async resume(): Promise<BudgetView> {
    await this.ready();
    if (this.state.paused) {
      this.state.paused = null;
      await this.stateModel
        .updateOne(
          { _id: BUDGET_STATE_ID },
          { $set: { paused: null } },
          { upsert: true },
        )
        .exec();
      await this.announce(null, null, null);
    }
    return this.view();
  }

  /**
   * Why unattended work may not start now (paused, or a cap it counts against is
   * already used up), in plain words; null when it may try. Calls are still
   * checked one by one: this only spares a run that could not make any.
   */
  async unattendedRefusal(): Promise<string | null> {
    await this.ready();
    const { budget, timezone } = await this.settings.get();
    const day = this.today(timezone);
    if (this.pausedOn(day)) return this.pausedMessage();
    const spent = this.ledger.spent(day);
    for (const cap of Object.keys(SPENT_OF) as BudgetCapName[]) {
      const limit = budget[cap];
      const used = spent[SPENT_OF[cap]];
      if (limit !== null && used >= limit)
        return `${CAP_WORDS[cap]} of ${dollars(limit)} is used (${dollars(used)}). Raise it in Settings; unattended work goes on when the budget allows.`;
    }
    return null;
  }

  private pausedMessage(): string {
    return `Unattended work is paused: ${this.state.paused?.reason ?? 'the provider said the account has no credit left.'} Resume it on the Usage page once credit is added; it resumes by itself tomorrow.`;
  }

  /**
   * The adapter with every model call of its turns held to the budget: before a
   * call goes out its worst case (estimated prompt tokens × input price + output
   * limit × output price) is reserved, or the call is refused with a
   * `BudgetRefusal`; the reported usage settles it.
   */
  guard(adapter: LlmAdapter, call: GuardedCall): LlmAdapter {
    return {
      streamTurn: async (request, sink) => {
        await this.ready();
        const settings = await this.settings.get();
        const price = priceFor(
          call.modelId,
          call.provider,
          settings.modelPrices,
        );
        const unattended = !isAttended(call.source);
        if (!price && unattended)
          throw new BudgetRefusal(unpricedMessage(call.modelId), 0);
        const turn = new GuardedTurn(this, call, request, price, unattended);
        try {
          const result = await adapter.streamTurn(request, turn.sink(sink));
          if (!price) await this.askPriceOnce(call.modelId, sink);
          return result;
        } catch (error) {
          if (error instanceof LlmProviderError && error.kind === 'quota')
            await this.pause(error.message);
          throw error;
        } finally {
          await turn.end();
        }
      },
    };
  }

  /**
   * Holds one model call made outside the streaming adapters (an image, a voice
   * response): its worst case reserved now, or a `BudgetRefusal` thrown; the hold
   * is settled to what the provider reported, or released when nothing went out.
   */
  async hold(call: GuardedCall, worst: CallWorstCase): Promise<SpendHold> {
    await this.ready();
    const settings = await this.settings.get();
    const price = priceFor(call.modelId, call.provider, settings.modelPrices);
    const unattended = !isAttended(call.source);
    if (!price && unattended)
      throw new BudgetRefusal(unpricedMessage(call.modelId), 0);
    const costUsd = price
      ? worstCaseCost(
          worst.inputTokens,
          worst.outputTokens,
          price.price,
          worst.audio,
        )
      : 0;
    const { id, day } = this.reserveCall(
      call,
      unattended,
      costUsd,
      0,
      settings.budget,
      settings.timezone,
    );
    const recordIds: string[] = [];
    if (costUsd > 0) {
      const recordId = new Types.ObjectId().toHexString();
      recordIds.push(recordId);
      this.recordReservation({
        _id: recordId,
        day,
        source: call.source,
        model: call.modelId,
        provider: call.provider,
        costUsd,
      });
    }
    let open = true;
    const finish = (actualUsd: number): Promise<void> => {
      if (!open) return Promise.resolve();
      open = false;
      this.settleCall(id, actualUsd, settings.budget, settings.timezone);
      return this.forgetReservations(recordIds);
    };
    return {
      costUsd,
      priced: price !== null,
      settle: (usage) =>
        finish(usage ? (price ? costOf(usage, price.price) : 0) : costUsd),
      release: () => finish(0),
    };
  }

  /**
   * Whether a call of this worst case would fit under the caps now (nothing is
   * held): a voice call asks after each response, to say goodbye while it can.
   */
  async wouldFit(
    call: GuardedCall,
    worst: CallWorstCase,
  ): Promise<string | null> {
    try {
      const held = await this.hold(call, worst);
      await held.release();
      return null;
    } catch (error) {
      if (error instanceof BudgetRefusal) return error.message;
      throw error;
    }
  }

  /** The caps and zone a call is checked against (the settings' cached copy). */
  async spendSettings(): Promise<{ budget: BudgetCaps; timezone: string }> {
    return this.settings.get();
  }

  /** Reserves a call's worst case or throws the refusal the owner reads. */
  reserveCall(
    call: GuardedCall,
    unattended: boolean,
    costUsd: number,
    callsBefore: number,
    caps: BudgetCaps,
    timezone: string,
  ): { id: number; day: string } {
    const day = this.today(timezone);
    if (unattended && this.pausedOn(day))
      throw new BudgetRefusal(this.pausedMessage(), callsBefore);
    const result = this.ledger.reserve({
      costUsd,
      unattended,
      day,
      caps,
      overBudget: !unattended && call.allowOverBudget === true,
    });
    if (!result.ok)
      throw new BudgetRefusal(
        refusalMessage(result.refusal, unattended),
        callsBefore,
      );
    return { id: result.id, day };
  }

  settleCall(
    id: number,
    costUsd: number,
    caps: BudgetCaps,
    timezone: string,
  ): void {
    const day = this.today(timezone);
    this.ledger.settle(id, day, costUsd);
    if (costUsd > 0) this.checkThresholds(caps, day);
  }

  /**
   * The durable trace of a hold, written once its call has run for RESERVATION_RECORD_AFTER_MS (never
   * awaited by the call: it must not slow it down). Most calls of a quick model end before that and
   * cost no write at all; a crash charges the records it finds at their worst case, so what a crash
   * can leave uncharged is the calls started in the last second before it.
   */
  recordReservation(record: Omit<BudgetReservationRecord, 'createdAt'>): void {
    const createdAt = this.clock.now();
    const timer = setTimeout(() => {
      this.unwritten.delete(record._id);
      this.written.set(record._id, this.insertReservation(record, createdAt));
    }, RESERVATION_RECORD_AFTER_MS);
    timer.unref();
    this.unwritten.set(record._id, { timer, record });
  }

  private insertReservation(
    record: Omit<BudgetReservationRecord, 'createdAt'>,
    createdAt: Date,
  ): Promise<unknown> {
    // The driver's insert, not a hydrated document: nothing to cast.
    return (
      this.reservations
        .collection as unknown as mongo.Collection<BudgetReservationRecord>
    )
      .insertOne({ ...record, createdAt })
      .catch((error: Error) =>
        this.logger.warn(`Could not store a reservation: ${error.message}`),
      );
  }

  /**
   * Ends the traces of a turn's holds: a record not written yet is dropped (no database command),
   * one written is removed once its insert landed. Awaited at the end of the turn (not on any
   * call's path), so a stopping server has removed them before its database closes: only a crash
   * leaves one behind.
   */
  async forgetReservations(ids: string[]): Promise<void> {
    const writes: Promise<unknown>[] = [];
    const written: string[] = [];
    for (const id of ids) {
      const unwritten = this.unwritten.get(id);
      if (unwritten) {
        clearTimeout(unwritten.timer);
        this.unwritten.delete(id);
        continue;
      }
      const write = this.written.get(id);
      if (!write) continue;
      this.written.delete(id);
      writes.push(write);
      written.push(id);
    }
    if (!written.length) return;
    await Promise.allSettled(writes);
    await this.reservations.collection
      .deleteMany({ _id: { $in: written } } as object)
      .catch((error: Error) =>
        this.logger.warn(`Could not remove reservations: ${error.message}`),
      );
  }

  private async pause(reason: string): Promise<void> {
    const { timezone } = await this.settings.get();
    const day = this.today(timezone);
    if (this.pausedOn(day)) return;
    this.state.paused = { since: this.clock.now(), day, reason };
    await this.stateModel
      .updateOne(
        { _id: BUDGET_STATE_ID },
        { $set: { paused: this.state.paused } },
        { upsert: true },
      )
      .exec()
      .catch((error: Error) =>
        this.logger.warn(`Could not store the pause: ${error.message}`),
      );
    await this.announce(
      null,
      null,
      `Metatron paused its unattended work: ${reason}`,
    );
  }

  /** Sends one notice per cap, period and threshold (80%, 100%) when spend reaches it. */
  private checkThresholds(caps: BudgetCaps, day: string): void {
    const spent = this.ledger.spent(day);
    for (const cap of Object.keys(SPENT_OF) as BudgetCapName[]) {
      const limit = caps[cap];
      if (limit === null || limit <= 0) continue;
      const used = spent[SPENT_OF[cap]];
      const percent = used >= limit ? 100 : used >= 0.8 * limit ? 80 : null;
      if (!percent) continue;
      const period = CAP_PERIOD[cap] === 'day' ? day : day.slice(0, 7);
      const key = `${cap}|${period}|${percent}`;
      if (this.state.notices.has(key)) continue;
      this.state.notices.add(key);
      // Also the 80% notice of a period whose spend jumped straight to 100%: one of each at most.
      if (percent === 100) this.state.notices.add(`${cap}|${period}|80`);
      const text =
        percent === 100
          ? `${CAP_WORDS[cap]} of ${dollars(limit)} is used (${dollars(used)}). ${cap === 'dailyUsd' || cap === 'monthlyUsd' ? 'Replies stop until it resets or you raise it in Settings.' : 'Jobs, Pulse and auto-replies wait until it resets or you raise it in Settings.'}`
          : `${CAP_WORDS[cap]} is at ${Math.floor((used / limit) * 100 + 1e-9)}%: ${dollars(used)} of ${dollars(limit)}.`;
      void this.stateModel
        .updateOne(
          { _id: BUDGET_STATE_ID },
          { $addToSet: { notices: key } },
          { upsert: true },
        )
        .exec()
        .catch((error: Error) =>
          this.logger.warn(`Could not store a budget notice: ${error.message}`),
        );
      void this.announce(cap, percent, text);
    }
  }

  private async announce(
    cap: BudgetCapName | null,
    percent: 80 | 100 | null,
    message: string | null,
  ): Promise<void> {
    const { budget, timezone } = await this.settings.get();
    this.events.emit('budget.changed', {
      state: this.stateOf(budget, this.today(timezone)),
      cap,
      percent,
      message,
      at: this.clock.now().toISOString(),
    });
  }

  /** Caps changed in Settings: the console's banner follows, and waiting work may go on. */
  @OnEvent('settings.updated')
  async capsChanged(): Promise<void> {
    await this.ready().catch(() => undefined);
    await this.announce(null, null, null).catch(() => undefined);
  }

  /** The first reply of an unpriced cloud model ends with a question about its price, once per model. */
  private async askPriceOnce(
    modelId: string,
    sink: LlmTurnSink,
  ): Promise<void> {
    if (this.state.askedPrices.has(modelId)) return;
    this.state.askedPrices.add(modelId);
    sink.onText(
      `\n\n(The model '${modelId}' has no known price, so its cost is not counted and jobs, Pulse and auto-replies will not use it. Set its price per million tokens in Settings → Model prices.)`,
    );
    await this.stateModel
      .updateOne(
        { _id: BUDGET_STATE_ID },
        { $addToSet: { askedPrices: modelId } },
        { upsert: true },
      )
      .exec()
      .catch((error: Error) =>
        this.logger.warn(`Could not store a price question: ${error.message}`),
      );
  }
}

/** What one call may use at most: its prompt, its output limit, and whether it speaks (audio prices). */
export interface CallWorstCase {
  inputTokens: number;
  outputTokens: number;
  audio?: boolean;
}

/** One call's reservation; settling or releasing it a second time does nothing. */
export interface SpendHold {
  /** The worst case held, in USD. */
  readonly costUsd: number;
  /** False for a model nobody priced (counted at 0). */
  readonly priced: boolean;
  /** Counts what the provider reported; `null` (nothing reported, but it answered): the worst case. */
  settle(usage: TokenUsage | null): Promise<void>;
  /** Nothing went out: the hold is dropped, nothing counted. */
  release(): Promise<void>;
}

function unpricedMessage(modelId: string): string {
  return `The model '${modelId}' has no known price, so unattended work does not use it (its cost could not be counted). Set its price in Settings (model prices).`;
}

/** The calls of one turn: what they may cost, and the holds under way. */
class GuardedTurn {
  private promptBytes: number;
  private systemBytes: number;
  private toolBytes: number;
  private calls = 0;
  private tokens = 0;
  private current: {
    id: number;
    costUsd: number;
    activity: boolean;
  } | null = null;
  private readonly recordIds: string[] = [];
  private ended = false;
  private caps: BudgetCaps | null = null;
  private timezone = 'UTC';
  private outputLimit = 0;

  constructor(
    private readonly budget: BudgetService,
    private readonly call: GuardedCall,
    request: LlmTurnRequest,
    private readonly price: PriceLookup,
    private readonly unattended: boolean,
  ) {
    this.systemBytes = bytes(request.systemPrompt ?? '');
    this.toolBytes = request.tools?.length ? toolsBytes(request.tools) : 0;
    let history = 0;
    for (const message of request.history)
      history +=
        message.role === 'user'
          ? bytes(message.text)
          : sizedOnce(message.parts);
    let attached = 0;
    for (const file of request.attachments ?? [])
      attached +=
        3 *
        attachmentTokens(
          file.kind,
          file.kind === 'text' ? bytes(file.text) : file.size,
        );
    this.promptBytes = history + bytes(request.userMessage) + attached;
    this.outputLimit = request.maxOutputTokens ?? 0;
  }

  sink(outer: LlmTurnSink): LlmTurnSink {
    return forwardingSink(outer, {
      beforeCall: async () => {
        await outer.beforeCall?.();
        if (this.ended)
          throw new BudgetRefusal('The reply already ended.', this.calls);
        this.settlePending();
        const settings = await this.settingsNow();
        const promptTokens = promptTokensOf(
          this.promptBytes + this.systemBytes + this.toolBytes,
        );
        const max = this.call.maxTokens;
        if (max !== undefined && this.tokens + promptTokens > max)
          throw new BudgetRefusal(
            `This run stopped at ${this.tokens.toLocaleString('en-US')} tokens: the next model call would pass the job's limit of ${max.toLocaleString('en-US')} tokens per run (maxTokensPerRun; raise it in the job's settings if the job needs more).`,
            this.calls,
            'tokens',
          );
        const costUsd = this.price
          ? worstCaseCost(promptTokens, this.outputLimit, this.price.price)
          : 0;
        const { id, day } = this.budget.reserveCall(
          this.call,
          this.unattended,
          costUsd,
          this.calls,
          settings.budget,
          settings.timezone,
        );
        this.current = { id, costUsd, activity: false };
        this.calls += 1;
        if (costUsd > 0) {
          const recordId = new Types.ObjectId().toHexString();
          this.recordIds.push(recordId);
          this.budget.recordReservation({
            _id: recordId,
            day,
            source: this.call.source,
            model: this.call.modelId,
            provider: this.call.provider,
            costUsd,
          });
        }
      },
      onUsage: (usage: TokenUsage) => {
        this.tokens += (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
        const pending = this.current;
        this.current = null;
        if (pending && this.caps)
          this.budget.settleCall(
            pending.id,
            this.price ? costOf(usage, this.price.price) : 0,
            this.caps,
            this.timezone,
          );
        outer.onUsage?.(usage);
      },
      onText: (delta) => {
        this.promptBytes += bytes(delta);
        if (this.current) this.current.activity = true;
        outer.onText(delta);
      },
      onActivity: () => {
        if (this.current) this.current.activity = true;
        outer.onActivity?.();
      },
      executeTool: async (toolCall) => {
        this.promptBytes += bytes(JSON.stringify(toolCall.arguments)) + 64;
        const result = await outer.executeTool(toolCall);
        this.promptBytes += bytes(result);
        return result;
      },
      ...(outer.nextRequest
        ? {
            nextRequest: async () => {
              const next = (await outer.nextRequest?.()) ?? null;
              if (next) {
                this.systemBytes = bytes(next.systemPrompt ?? '');
                this.toolBytes = next.tools.length ? toolsBytes(next.tools) : 0;
              }
              return next;
            },
          }
        : {}),
    });
  }

  private async settingsNow(): Promise<{
    budget: BudgetCaps;
    timezone: string;
  }> {
    const settings = await this.budget.spendSettings();
    this.caps = settings.budget;
    this.timezone = settings.timezone;
    return settings;
  }

  /**
   * A call that reported no usage: charged at its worst case when the provider
   * started answering (it may bill what it sent), else nothing (it never answered).
   */
  private settlePending(): void {
    const pending = this.current;
    this.current = null;
    if (pending && this.caps)
      this.budget.settleCall(
        pending.id,
        pending.activity ? pending.costUsd : 0,
        this.caps,
        this.timezone,
      );
  }

  end(): Promise<void> {
    this.ended = true;
    this.settlePending();
    return this.budget.forgetReservations(this.recordIds);
  }
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The JSON size of values never changed in place once made: the registry's cached tool specs and the
 * history's decoded reply parts (toLlmHistory keeps one array per stored reply). Sized once, not on every turn.
 */
const jsonBytes = new WeakMap<object, number>();

function sizedOnce(value: object): number {
  let size = jsonBytes.get(value);
  if (size === undefined) {
    size = bytes(JSON.stringify(value));
    jsonBytes.set(value, size);
  }
  return size;
}

/** `bytes(JSON.stringify(tools))`, from each spec's own size: `[`, `]` and a comma between two. */
function toolsBytes(tools: readonly LlmToolSpec[]): number {
  let size = tools.length + 1;
  for (const tool of tools) size += sizedOnce(tool);
  return size;
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

function roundSpent(spent: BudgetView['spent']): BudgetView['spent'] {
  return {
    todayUsd: round(spent.todayUsd),
    monthUsd: round(spent.monthUsd),
    unattendedTodayUsd: round(spent.unattendedTodayUsd),
  };
}

function previousMonthStart(day: string): string {
  return DateTime.fromISO(day)
    .minus({ months: 1 })
    .startOf('month')
    .toISODate() as string;
}

/** The owner's words for a call that would cross a cap. */
export function refusalMessage(
  refusal: CapRefusal,
  unattended: boolean,
): string {
  const { cap, limitUsd, spentUsd, reservedUsd, costUsd } = refusal;
  const what = CAP_WORDS[cap];
  const head =
    spentUsd >= limitUsd
      ? `${what} of ${dollars(limitUsd)} is used (${dollars(spentUsd)}).`
      : `${what} of ${dollars(limitUsd)} would be passed: ${dollars(spentUsd)} is spent${reservedUsd > 0 ? `, ${dollars(reservedUsd)} is held by replies under way` : ''} and this call could cost up to ${dollars(costUsd)}.`;
  if (unattended)
    return `${head} Raise it in Settings; waiting work goes on when the budget allows.`;
  return `${head} Raise it in Settings, or allow this one reply.`;
}
