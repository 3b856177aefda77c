import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { DateTime } from 'luxon';
import type { Model } from 'mongoose';
import type { MemoryRunView } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { SettingsService } from '../settings/settings.service';
import { planConsolidation } from './consolidation-plan';
import { MemoryIndex } from './memory-index';
import { MemoryNoteRecord } from './memory-note.schema';
import { MemoryRunRecord } from './memory-run.schema';

/** How often the schedule is looked at; the run itself is nightly. */
const CHECK_INTERVAL_MS = 15 * 60_000;
/** The owner's local hour the run happens in. */
const RUN_HOUR = 3;
/** No second run within this long of the last one. */
const MIN_GAP_MS = 20 * 3_600_000;

/**
 * The nightly consolidation (03:00 in the owner's zone): merges duplicate notes
 * into the newest (keeping every source and the merged text in its history) and
 * drops expired ones, as `planConsolidation` decides; a run that would remove more
 * than a quarter of the notes is refused and changes nothing. Every run is kept in
 * `memory_runs` with each change's reason and prior text; the console shows the latest.
 * It calls no model (so it spends nothing).
 */
@Injectable()
export class MemoryConsolidation
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger(MemoryConsolidation.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<MemoryRunView> | null = null;

  constructor(
    @InjectModel(MemoryNoteRecord.name)
    private readonly notes: Model<MemoryNoteRecord>,
    @InjectModel(MemoryRunRecord.name)
    private readonly runs: Model<MemoryRunRecord>,
    private readonly index: MemoryIndex,
    private readonly settings: SettingsService,
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
  }

  async latest(): Promise<MemoryRunView | null> {
    const run = await this.runs
      .findOne()
      .sort({ startedAt: -1 })
      .lean<MemoryRunRecord>()
      .exec();
    return run ? toRunView(run) : null;
  }

  async runIfDue(): Promise<MemoryRunView | null> {
    const now = this.clock.now();
    const { timezone } = await this.settings.get();
    if (DateTime.fromJSDate(now).setZone(timezone).hour !== RUN_HOUR)
      return null;
    const last = await this.latest();
    if (last && now.getTime() - Date.parse(last.startedAt) < MIN_GAP_MS)
      return null;
    return this.run();
  }

  /** One run; a call during a run waits for it. */
  run(): Promise<MemoryRunView> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<MemoryRunView> {
    const startedAt = this.clock.now();
    const all = await this.notes.find().lean<MemoryNoteRecord[]>().exec();
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
    if (plan.refusal) {
      this.logger.warn(`Memory consolidation refused: ${plan.refusal}`);
      return this.record(startedAt, 'refused', plan.refusal, all.length, []);
    }
    for (const { keep, drop } of plan.merges) {
      const kept = byId.get(keep.id) as MemoryNoteRecord;
      const history = [...(kept.history ?? [])];
      const messageIds = new Set(kept.messageIds ?? []);
      for (const note of drop) {
        const dropped = byId.get(note.id) as MemoryNoteRecord;
        history.push({
          text: dropped.text,
          at: startedAt,
          reason: `merged a duplicate (said by ${dropped.source} on ${new Date(dropped.observedAt).toISOString().slice(0, 10)})`,
          by: 'consolidation',
        });
        for (const id of dropped.messageIds ?? []) messageIds.add(id);
      }
      const set = {
        history,
        messageIds: [...messageIds],
        updatedAt: startedAt,
      };
      await this.notes.updateOne({ _id: kept._id }, { $set: set }).exec();
      this.index.putNote({ ...kept, ...set });
      for (const note of drop) await this.remove(note.id, keep.id);
      this.announce(keep.id, 'updated');
    }
    for (const note of plan.expired) await this.remove(note.id, null);
    return this.record(startedAt, 'done', null, all.length, plan.changes);
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

  private async record(
    startedAt: Date,
    outcome: 'done' | 'refused',
    reason: string | null,
    notesBefore: number,
    changes: MemoryRunView['changes'],
  ): Promise<MemoryRunView> {
    const run = await this.runs.create({
      startedAt,
      outcome,
      reason,
      notesBefore,
      changes,
    });
    return toRunView(run.toObject<MemoryRunRecord>());
  }

  private announce(id: string, change: 'updated' | 'deleted'): void {
    this.events.emit('memories.changed', {
      id,
      change,
      by: 'consolidation',
      at: this.clock.now().toISOString(),
    });
  }
}

function toRunView(run: MemoryRunRecord): MemoryRunView {
  return {
    id: run._id.toHexString(),
    startedAt: new Date(run.startedAt).toISOString(),
    outcome: run.outcome,
    reason: run.reason ?? null,
    notesBefore: run.notesBefore,
    changes: run.changes ?? [],
  };
}
