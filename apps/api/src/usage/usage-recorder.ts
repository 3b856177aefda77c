import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ZonedDay } from '../clock/zoned-day';
import type {
  ModelProvider,
  TokenUsage,
  UsageSource,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import {
  forwardingSink,
  type LlmAdapter,
  type LlmTurnResult,
} from '../llm/llm-adapter';
import type { TurnSource } from '../llm/turn-source';
import { costOf, priceFor } from '../budget/model-prices';
import { SettingsService } from '../settings/settings.service';
import {
  UsageRollupRecord,
  usageRollupId,
} from './schemas/usage-rollup.schema';
import { UsageRollups, type UsageRollupRow } from './usage-rollups';
import { driverCollection } from '../database/driver-collection';
import { isDuplicateKey } from '../database/duplicate-key';

export interface UsageEntry {
  source: TurnSource;
  /** The model id as configured (with its `<endpoint>/` prefix). */
  model: string;
  provider: ModelProvider;
  usage: TokenUsage | undefined;
  /**
   * USD to count instead of pricing `usage` (a reservation left by a crash, charged at
   * its worst case); such an entry adds no reply to `turns`.
   */
  costUsd?: number;
}

/** One rollup's spend, as the budget loads it at start. */
export interface SpendRow {
  day: string;
  source: UsageSource;
  costUsd: number;
}

/** Turn sources as the Usage page names them. */
export const SOURCE_OF: Record<TurnSource, UsageSource> = {
  chat: 'chat',
  voice: 'voice',
  cron: 'job',
  pulse: 'pulse',
  'auto-reply': 'auto-reply',
  // No tool offered over MCP calls a model; were one to, it counts (and is capped) as unattended work.
  mcp: 'job',
  memory: 'memory',
};

/** The counts one rollup write adds. */
interface RollupIncrement {
  inputTokens: number;
  outputTokens: number;
  turns: number;
  costUsd: number;
}

/** What a rollup's first write stores besides its counts. */
type RollupKey = Omit<UsageRollupRow, keyof RollupIncrement | '_id'>;

/** Counts waiting for a rollup's next write, and the records that wait on it. */
interface PendingRollup {
  inc: RollupIncrement;
  setOnInsert: RollupKey;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Adds the tokens a provider reported for a model call to that day's rollup (owner's zone). */
@Injectable()
export class UsageRecorder {
  /** Per rollup id: the counts queued behind the write in flight (see `addToRollup`). */
  private readonly queued = new Map<string, { next: PendingRollup | null }>();
  private readonly logger = new Logger(UsageRecorder.name);

  /** The owner's day of a count, luxon once a day (not once a turn). */
  private readonly zonedDay = new ZonedDay();

  constructor(
    @InjectModel(UsageRollupRecord.name)
    private readonly model: Model<UsageRollupRecord>,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly rollups: UsageRollups,
  ) {}

  /**
   * The adapter, with every model call of the turns it streams counted: the usage
   * the provider reported for each call, recorded once the turn ends, whether it
   * finished, failed, hit the tool-round cap or was stopped.
   */
  meter(adapter: LlmAdapter, call: Omit<UsageEntry, 'usage'>): LlmAdapter {
    return {
      streamTurn: async (request, sink) => {
        const calls = new UsageSum();
        let result: LlmTurnResult | undefined;
        try {
          result = await adapter.streamTurn(
            request,
            forwardingSink(sink, {
              onUsage: (usage) => {
                calls.add(usage);
                sink.onUsage?.(usage);
              },
            }),
          );
          return result;
        } finally {
          // An adapter that reports no call by call still reports the turn's total.
          await this.record({
            ...call,
            usage: calls.total() ?? result?.usage,
          });
        }
      },
    };
  }

  /** The rollups' spend from `fromDay` on. */
  spendSince(fromDay: string): Promise<SpendRow[]> {
    return spendSince(this.model, fromDay);
  }

  /**
   * Adds to one rollup; resolves once a write holding these counts is stored. The embedded
   * database applies an `$inc` as read-then-write, so two at once lose one (40 concurrent
   * records kept 4 of 40 counts): one write per rollup is in flight at a time, and the counts
   * that arrive meanwhile go out together in the next one. One write per record, one after
   * another, made every concurrent turn (50 auto-replies at once) wait in that line.
   */
  private addToRollup(
    id: string,
    inc: RollupIncrement,
    setOnInsert: RollupKey,
  ): Promise<void> {
    let rollup = this.queued.get(id);
    const idle = !rollup;
    if (!rollup) {
      rollup = { next: null };
      this.queued.set(id, rollup);
    }
    const pending = (rollup.next ??= {
      inc: { inputTokens: 0, outputTokens: 0, turns: 0, costUsd: 0 },
      setOnInsert,
      waiters: [],
    });
    pending.inc.inputTokens += inc.inputTokens;
    pending.inc.outputTokens += inc.outputTokens;
    pending.inc.turns += inc.turns;
    pending.inc.costUsd += inc.costUsd;
    const stored = new Promise<void>((resolve, reject) =>
      pending.waiters.push({ resolve, reject }),
    );
    if (idle) void this.drain(id, rollup);
    return stored;
  }

  private async drain(
    id: string,
    rollup: { next: PendingRollup | null },
  ): Promise<void> {
    for (let batch = rollup.next; batch; batch = rollup.next) {
      rollup.next = null;
      // Through the driver: numbers and strings, nothing for mongoose to cast, once per turn.
      const write = () =>
        driverCollection(this.model.collection).updateOne(
          { _id: id } as object,
          { $inc: { ...batch.inc }, $setOnInsert: batch.setOnInsert },
          { upsert: true },
        );
      try {
        // Two first replies of a day racing to insert: the loser's upsert becomes an update.
        const writeOnce = () =>
          write().catch((error: unknown) => {
            if (isDuplicateKey(error)) return write();
            throw error;
          });
        // The in-memory copy (`GET /api/usage`) adds the counts once the database has them.
        await this.rollups.write(
          { _id: id, ...batch.setOnInsert },
          batch.inc,
          writeOnce,
        );
        for (const waiter of batch.waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of batch.waiters) waiter.reject(error);
      }
    }
    this.queued.delete(id);
  }

  /** Never throws: a usage count that cannot be written must not fail the reply. */
  async record(entry: UsageEntry, at?: { day: string }): Promise<void> {
    const input = count(entry.usage?.inputTokens);
    const output = count(entry.usage?.outputTokens);
    const charged = entry.costUsd !== undefined;
    if (!charged && (!entry.usage || (input === 0 && output === 0))) return;
    try {
      const { timezone, modelPrices } = await this.settings.get();
      const day =
        at?.day ?? this.zonedDay.of(this.clock.now().getTime(), timezone);
      const price = priceFor(entry.model, entry.provider, modelPrices);
      const costUsd = charged
        ? (entry.costUsd as number)
        : price && entry.usage
          ? costOf(entry.usage, price.price)
          : 0;
      const source = SOURCE_OF[entry.source];
      await this.addToRollup(
        usageRollupId(day, source, entry.model),
        {
          inputTokens: input,
          outputTokens: output,
          turns: charged ? 0 : 1,
          costUsd,
        },
        { day, source, model: entry.model, provider: entry.provider },
      );
    } catch (error) {
      this.logger.warn(
        `Token usage not recorded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/** What the days from `fromDay` on cost, per day and source (for the budget's ledger at start). */
export async function spendSince(
  model: Model<UsageRollupRecord>,
  fromDay: string,
): Promise<SpendRow[]> {
  const rows = await model
    .find({ _id: { $gte: `${fromDay}|` } }, { day: 1, source: 1, costUsd: 1 })
    .lean()
    .exec();
  return rows.map((row) => ({
    day: row.day,
    source: row.source,
    costUsd: typeof row.costUsd === 'number' ? row.costUsd : 0,
  }));
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? Math.round(value)
    : 0;
}

/** Adds up the usage of a turn's model calls. */
class UsageSum {
  private input = 0;
  private cached = 0;
  private output = 0;
  private seen = false;

  add(usage: TokenUsage): void {
    this.seen = true;
    this.input += count(usage.inputTokens);
    this.cached += count(usage.cachedInputTokens);
    this.output += count(usage.outputTokens);
  }

  total(): TokenUsage | undefined {
    return this.seen
      ? {
          inputTokens: this.input,
          outputTokens: this.output,
          totalTokens: this.input + this.output,
          ...(this.cached ? { cachedInputTokens: this.cached } : {}),
        }
      : undefined;
  }
}
