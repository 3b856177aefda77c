import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { ModelProvider, UsageSource } from '@metatronos/shared-types';
import { StartUpWork } from '../database/start-up-work';
import { UsageRollupRecord } from './schemas/usage-rollup.schema';

/** One rollup as the Usage report adds it up. */
export interface UsageRollupRow {
  _id: string;
  day: string;
  source: UsageSource;
  model: string;
  provider: ModelProvider;
  inputTokens: number;
  outputTokens: number;
  turns: number;
  costUsd: number;
}

/** What one recorded reply adds to its rollup (the recorder's `$inc`). */
export type UsageIncrement = Pick<
  UsageRollupRow,
  'inputTokens' | 'outputTokens' | 'turns' | 'costUsd'
>;

/**
 * The `usage` rollups in memory, per day, so that `GET /api/usage` adds up a year without reading
 * it: FerretDB took 0.4–0.7 s to hand over a year's 4,000 rollups. The database stays the record:
 * the copy is read once (after the server listens, or on the first report), a restored backup
 * makes it read again, and every write goes through `write()` (UsageRecorder, the only writer),
 * which adds the increment once the database took it. A write whose outcome is unknown (it
 * failed) drops the copy, to be read again on the next report.
 */
@Injectable()
export class UsageRollups implements OnApplicationBootstrap {
  private byDay: Map<string, Map<string, UsageRollupRow>> | null = null;
  private loading: Promise<Map<string, Map<string, UsageRollupRow>>> | null =
    null;
  /** Bumped by each load and each drop: a load that finishes after a newer one keeps nothing. */
  private generation = 0;
  /** Writes under way: a load waits for them to end and holds new ones back, so none is counted twice or lost. */
  private writing = 0;
  private readonly writesEnded: Array<() => void> = [];
  private readonly logger = new Logger(UsageRollups.name);

  constructor(
    @InjectModel(UsageRollupRecord.name)
    private readonly model: Model<UsageRollupRecord>,
    private readonly startUp: StartUpWork,
  ) {}

  onApplicationBootstrap(): void {
    this.startUp.afterListening('read the usage rollups', () => this.warm());
  }

  /** A restored backup brought other rollups: read them again. */
  @OnEvent('backup.restored')
  async reloadAfterRestore(): Promise<void> {
    this.drop();
    await this.warm();
  }

  /** The rollups of the days `fromDay` to `toDay` (YYYY-MM-DD, both included), by day then `_id`. */
  async between(fromDay: string, toDay: string): Promise<UsageRollupRow[]> {
    const byDay = this.byDay ?? (await this.load());
    const rows: UsageRollupRow[] = [];
    const days = [...byDay.keys()].filter((d) => d >= fromDay && d <= toDay);
    for (const day of days.sort())
      rows.push(
        ...[...(byDay.get(day) as Map<string, UsageRollupRow>).values()].sort(
          (a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0),
        ),
      );
    return rows;
  }

  /**
   * Runs `write` (one `$inc` upsert of the rollup `row._id`) and, once the database took it, adds
   * `increment` to the copy. Waits while the copy is being read.
   */
  async write(
    row: Omit<UsageRollupRow, keyof UsageIncrement>,
    increment: UsageIncrement,
    write: () => Promise<unknown>,
  ): Promise<void> {
    while (this.loading) await this.loading.catch(() => undefined);
    this.writing++;
    try {
      await write();
      if (this.byDay) add(this.byDay, { ...row, ...zero() }, increment);
    } catch (error) {
      this.drop();
      throw error;
    } finally {
      this.writing--;
      if (this.writing === 0)
        for (const wake of this.writesEnded.splice(0)) wake();
    }
  }

  private async warm(): Promise<void> {
    await this.load().catch((error: Error) =>
      this.logger.warn(
        `Could not read the usage rollups (read again on the next report): ${error.message}`,
      ),
    );
  }

  private drop(): void {
    this.generation++;
    this.byDay = null;
    this.loading = null;
  }

  private load(): Promise<Map<string, Map<string, UsageRollupRow>>> {
    if (this.byDay) return Promise.resolve(this.byDay);
    if (!this.loading) {
      const generation = this.generation;
      const loading = this.read(generation);
      this.loading = loading;
      const settled = () => {
        if (this.loading === loading) this.loading = null;
      };
      loading.then(settled, settled);
    }
    return this.loading;
  }

  private async read(
    generation: number,
  ): Promise<Map<string, Map<string, UsageRollupRow>>> {
    while (this.writing > 0)
      await new Promise<void>((wake) => this.writesEnded.push(wake));
    const docs = await this.model.find().lean<UsageRollupRecord[]>().exec();
    const byDay = new Map<string, Map<string, UsageRollupRow>>();
    for (const doc of docs) {
      if (typeof doc.day !== 'string') continue;
      add(
        byDay,
        {
          _id: doc._id,
          day: doc.day,
          source: doc.source,
          model: doc.model,
          provider: doc.provider,
          ...zero(),
        },
        doc,
      );
    }
    if (generation === this.generation) this.byDay = byDay;
    return byDay;
  }
}

function zero(): UsageIncrement {
  return { inputTokens: 0, outputTokens: 0, turns: 0, costUsd: 0 };
}

function add(
  byDay: Map<string, Map<string, UsageRollupRow>>,
  blank: UsageRollupRow,
  increment: Partial<UsageIncrement>,
): void {
  const day =
    byDay.get(blank.day) ??
    (byDay.set(blank.day, new Map()).get(blank.day) as Map<
      string,
      UsageRollupRow
    >);
  const row = day.get(blank._id) ?? (day.set(blank._id, blank), blank);
  row.inputTokens += increment.inputTokens ?? 0;
  row.outputTokens += increment.outputTokens ?? 0;
  row.turns += increment.turns ?? 0;
  row.costUsd += increment.costUsd ?? 0;
}
