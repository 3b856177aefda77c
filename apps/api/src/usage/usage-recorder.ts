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
import { SettingsService } from '../settings/settings.service';
import {
  UsageRollupRecord,
  usageRollupId,
} from './schemas/usage-rollup.schema';

export interface UsageEntry {
  source: TurnSource;
  /** The model id as configured (with its `<endpoint>/` prefix). */
  model: string;
  provider: ModelProvider;
  usage: TokenUsage | undefined;
}

/** Turn sources as the Usage page names them. */
const SOURCE_OF: Record<TurnSource, UsageSource> = {
  chat: 'chat',
  voice: 'voice',
  cron: 'job',
  pulse: 'pulse',
  'auto-reply': 'auto-reply',
};

/** Adds the tokens a provider reported for a model call to that day's rollup (owner's zone). */
@Injectable()
export class UsageRecorder {
  private readonly logger = new Logger(UsageRecorder.name);

  constructor(
    @InjectModel(UsageRollupRecord.name)
    private readonly model: Model<UsageRollupRecord>,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
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

  /** Never throws: a usage count that cannot be written must not fail the reply. */
  async record(entry: UsageEntry): Promise<void> {
    const input = count(entry.usage?.inputTokens);
    const output = count(entry.usage?.outputTokens);
    if (!entry.usage || (input === 0 && output === 0)) return;
    try {
      const { timezone } = await this.settings.get();
      const day = DateTime.fromJSDate(this.clock.now(), {
        zone: timezone,
      }).toISODate() as string;
      const source = SOURCE_OF[entry.source];
      const _id = usageRollupId(day, source, entry.model);
      const write = () =>
        this.model.updateOne(
          { _id },
          {
            $inc: { inputTokens: input, outputTokens: output, turns: 1 },
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
      await write().catch((error: { code?: number }) => {
        if (error?.code === 11000) return write();
        throw error;
      });
    } catch (error) {
      this.logger.warn(
        `Token usage not recorded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? Math.round(value)
    : 0;
}

/** Adds up the usage of a turn's model calls. */
class UsageSum {
  private input = 0;
  private output = 0;
  private seen = false;

  add(usage: TokenUsage): void {
    this.seen = true;
    this.input += count(usage.inputTokens);
    this.output += count(usage.outputTokens);
  }

  total(): TokenUsage | undefined {
    return this.seen
      ? {
          inputTokens: this.input,
          outputTokens: this.output,
          totalTokens: this.input + this.output,
        }
      : undefined;
  }
}
