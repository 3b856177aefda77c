import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DateTime } from 'luxon';
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
import { UsageRollups } from './usage-rollups';

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

/** Adds the tokens a provider reported for a model call to that day's rollup (owner's zone). */
@Injectable()
export class UsageRecorder {
  /** The last queued write of each rollup id (see `inTurn`). */
  private readonly writing = new Map<string, Promise<void>>();
  private readonly logger = new Logger(UsageRecorder.name);

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
   * Runs the writes to one rollup one after another. The embedded database applies an
   * `$inc` as read-then-write, so two at once lose one (40 concurrent records kept 4 of
   * 40 counts); one process writes the rollups, so an in-process queue per rollup holds.
   */
  private async inTurn(
    id: string,
    write: () => Promise<unknown>,
  ): Promise<void> {
    const run = (this.writing.get(id) ?? Promise.resolve()).then(write);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(id, settled);
    void settled.then(() => {
      if (this.writing.get(id) === settled) this.writing.delete(id);
    });
    await run;
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
        at?.day ??
        (DateTime.fromJSDate(this.clock.now(), {
          zone: timezone,
        }).toISODate() as string);
      const price = priceFor(entry.model, entry.provider, modelPrices);
      const costUsd = charged
        ? (entry.costUsd as number)
        : price && entry.usage
          ? costOf(entry.usage, price.price)
          : 0;
      const source = SOURCE_OF[entry.source];
      const _id = usageRollupId(day, source, entry.model);
      const increment = {
        inputTokens: input,
        outputTokens: output,
        turns: charged ? 0 : 1,
        costUsd,
      };
      const write = () =>
        this.model.updateOne(
          { _id },
          {
            $inc: increment,
            $setOnInsert: {
              day,
              source,
              model: entry.model,
              provider: entry.provider,
            },
          },
          { upsert: true },
        );
      // Two first replies of a day racing to insert: the loser's upsert becomes an update.
      const writeOnce = () =>
        write().catch((error: { code?: number }) => {
          if (error?.code === 11000) return write();
          throw error;
        });
      await this.inTurn(_id, () =>
        this.rollups.write(
          { _id, day, source, model: entry.model, provider: entry.provider },
          increment,
          writeOnce,
        ),
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
