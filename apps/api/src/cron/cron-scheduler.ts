import { ConflictException, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { OnEvent } from '@nestjs/event-emitter';
import { Types, type Model } from 'mongoose';
import type { AppEventMap, CronRunView, RunTrigger } from '@metatronos/shared-types';
import { AutomationRunsService } from '../automations/automation-runs.service';
import { AutomationTicker, type Schedulable } from '../automations/automation-ticker';
import { toRunView } from '../automations/run-views';
import { checkCronExpression, cronOccurrencesBetween, describeCron, nextCronRuns } from '../automations/schedule-math/cron-schedule';
import { ChatReplyService } from '../chats/chat-reply.service';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { formatPromptDateTime } from '../system-instruction/core-prompt-sections';
import { SettingsService } from '../settings/settings.service';
import { CronJobRecord } from './schemas/cron-job.schema';

/** A due time handled within this long of its time counts as on time; later, as a catch-up. */
export const ON_TIME_TOLERANCE_MS = 60_000;

interface Entry {
  id: string;
  expression: string;
  lastDueAt: Date;
  nextDue: Date | null;
}

/**
 * Runs the jobs: keeps each enabled job's next due time in memory, fires what
 * is due on the ticker, never lets a job overlap itself, and at start (or after
 * the machine slept) runs a recently missed time once and records older ones as
 * missed.
 */
@Injectable()
export class CronScheduler implements Schedulable, OnApplicationBootstrap {
  readonly name = 'cron';
  private readonly logger = new Logger(CronScheduler.name);
  private entries = new Map<string, Entry>();
  private readonly running = new Set<string>();
  /** Loads and ticks run one after another, so a reload never reads a due time a tick is moving. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    @InjectModel(CronJobRecord.name) private readonly jobs: Model<CronJobRecord>,
    private readonly runs: AutomationRunsService,
    private readonly replies: ChatReplyService,
    private readonly settings: SettingsService,
    private readonly ticker: AutomationTicker,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    ticker.register(this);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    await this.ticker.tick();
  }

  isRunning(jobId: string): boolean {
    return this.running.has(jobId);
  }

  nextDueAt(): Date | null {
    let earliest: Date | null = null;
    for (const entry of this.entries.values()) {
      if (entry.nextDue && (!earliest || entry.nextDue < earliest)) earliest = entry.nextDue;
    }
    return earliest;
  }

  /** Reads every job again (after any change) and re-arms the ticker. */
  async reload(): Promise<void> {
    await this.serial(() => this.load()).catch((error: Error) => this.logger.error(`Could not load the scheduled jobs: ${error.message}`));
    this.ticker.rearm();
  }

  /** The AI changed `cronjobs` through db_query: schedule what it wrote. */
  @OnEvent('data.changed')
  async onDataChanged(event: AppEventMap['data.changed']): Promise<void> {
    if (event.collection !== 'cronjobs') return;
    await this.reload();
    this.events.emit('cronjobs.changed', { jobId: '*', change: 'updated', by: 'ai', at: this.clock.now().toISOString() });
  }

  /** Another timezone moves every job. */
  @OnEvent('settings.updated')
  async onSettingsUpdated(): Promise<void> {
    await this.reload();
  }

  tick(now: Date): Promise<void> {
    return this.serial(() => this.fireDue(now));
  }

  private async fireDue(now: Date): Promise<void> {
    const due = [...this.entries.values()].filter((entry) => entry.nextDue && entry.nextDue <= now);
    if (!due.length) return;
    const timezone = (await this.settings.get()).timezone;
    // Side by side: a hundred jobs due in the same minute all start within it.
    await Promise.all(due.map((entry) => this.handleDue(entry, now, timezone)));
  }

  /** "Run now": 409 while the job (or a reply in its chat) is running. */
  async runNow(job: CronJobRecord): Promise<CronRunView> {
    const id = job._id.toHexString();
    if (this.isBusy(id, job.chatId)) throw new ConflictException('This job is already running. Wait for the run to finish.');
    return this.start(job, 'manual', null, this.clock.now());
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private isBusy(jobId: string, chatId: Types.ObjectId | null): boolean {
    return this.running.has(jobId) || (!!chatId && this.replies.isRunning(chatId.toHexString()));
  }

  private async load(): Promise<void> {
    const timezone = (await this.settings.get()).timezone;
    const now = this.clock.now();
    const jobs = await this.jobs.find({}).lean<CronJobRecord[]>().exec();
    const entries = new Map<string, Entry>();
    for (const job of jobs) {
      if (job.enabled === false || typeof job.cronExpression !== 'string') continue;
      if (!checkCronExpression(job.cronExpression, timezone, now).ok) continue;
      const id = job._id.toHexString();
      let lastDueAt = job.lastDueAt instanceof Date ? job.lastDueAt : null;
      if (!lastDueAt) {
        // Written by db_query without a start point: its schedule starts now, nothing is owed from before.
        lastDueAt = now;
        await this.jobs.updateOne({ _id: job._id }, { $set: { lastDueAt } }).exec();
      }
      const [nextDue] = nextCronRuns(job.cronExpression, timezone, lastDueAt, 1);
      entries.set(id, { id, expression: job.cronExpression, lastDueAt, nextDue: nextDue ?? null });
    }
    this.entries = entries;
  }

  /** Every time due in (lastDueAt, now]: the latest runs (on time or as a catch-up) unless too old; the rest are recorded as missed. */
  private async handleDue(entry: Entry, now: Date, timezone: string): Promise<void> {
    const { count, latest } = cronOccurrencesBetween(entry.expression, timezone, entry.lastDueAt, now);
    const [nextDue] = nextCronRuns(entry.expression, timezone, now, 1);
    entry.nextDue = nextDue ?? null;
    if (!latest) return;
    entry.lastDueAt = latest;
    const job = await this.jobs.findOneAndUpdate({ _id: new Types.ObjectId(entry.id) }, { $set: { lastDueAt: latest } }, { new: true }).lean<CronJobRecord>().exec();
    if (!job) {
      this.entries.delete(entry.id);
      return;
    }
    const late = now.getTime() - latest.getTime();
    const runsLatest = late <= Math.max(this.config.automations.catchUpWindowMs, ON_TIME_TOLERANCE_MS);
    const missed = runsLatest ? count - 1 : count;
    const start = { kind: 'cron' as const, jobId: entry.id, chatId: job.chatId?.toHexString() ?? null };
    if (missed > 0) {
      const lastMissed = runsLatest ? 'earlier times' : `the last was due at ${formatPromptDateTime(latest, timezone)}`;
      await this.runs.recordWithoutTurn(
        { ...start, trigger: 'catch-up', dueAt: latest },
        'missed',
        `${count >= 1000 ? 'At least 1000' : missed} scheduled run${missed === 1 ? ' was' : 's were'} missed while MetatronOS was not running (${lastMissed}).`,
      );
    }
    if (!runsLatest) return;
    const trigger: RunTrigger = late <= ON_TIME_TOLERANCE_MS ? 'schedule' : 'catch-up';
    if (this.isBusy(entry.id, job.chatId)) {
      await this.runs.recordWithoutTurn({ ...start, trigger, dueAt: latest }, 'skipped', 'busy');
      return;
    }
    void this.start(job, trigger, latest, this.clock.now()).catch((error: Error) => this.logger.error(`Could not start the job "${job.name}": ${error.message}`));
  }

  /** Marks the job running at once, then stores the run and sends the instruction to the job's chat. */
  private async start(job: CronJobRecord, trigger: RunTrigger, dueAt: Date | null, startedAt: Date): Promise<CronRunView> {
    const id = job._id.toHexString();
    this.running.add(id);
    try {
      const chatId = await this.ensureChat(job);
      const run = await this.runs.begin({ kind: 'cron', jobId: id, trigger, dueAt, chatId }, startedAt);
      await this.jobs.updateOne({ _id: job._id }, { $set: { lastRun: toRunView(run) } }).exec();
      const { timezone } = await this.settings.get();
      void this.runs
        .runTurn(run, job.instruction, { source: 'cron', prompt: { source: 'cron', extra: cronRunContext(job, trigger, dueAt ?? startedAt, timezone) } }, async (view) => {
          await this.finished(job._id, view);
          // Free before the run reads as ended, so "Run now" right after it is accepted.
          this.running.delete(id);
        })
        .finally(() => this.running.delete(id));
      return toRunView(run);
    } catch (error) {
      this.running.delete(id);
      throw error;
    }
  }

  private async finished(jobId: Types.ObjectId, run: CronRunView): Promise<void> {
    const update =
      run.outcome === 'success'
        ? { $set: { lastRun: run, consecutiveFailures: 0 } }
        : { $set: { lastRun: run }, $inc: { consecutiveFailures: 1 } };
    await this.jobs.updateOne({ _id: jobId }, update).exec();
  }

  /** The job's chat, made again if the owner deleted it. */
  private async ensureChat(job: CronJobRecord): Promise<string> {
    const { chatId, created } = await this.runs.chatFor(job.chatId, cronChatTitle(job.name), 'cron');
    if (created) {
      job.chatId = new Types.ObjectId(chatId);
      await this.jobs.updateOne({ _id: job._id }, { $set: { chatId: job.chatId } }).exec();
    }
    return chatId;
  }
}

export function cronChatTitle(name: string): string {
  return `Job: ${name}`;
}

/** What the model is told about the run it is in (appended to the combined prompt). */
export function cronRunContext(job: CronJobRecord, trigger: RunTrigger, dueAt: Date, timezone: string): string {
  const when =
    trigger === 'manual'
      ? 'The owner started this run by hand ("Run now").'
      : trigger === 'catch-up'
        ? `This run was due at ${formatPromptDateTime(dueAt, timezone)} while MetatronOS was not running; it is being caught up now.`
        : `This run was due at ${formatPromptDateTime(dueAt, timezone)}.`;
  return [
    '## Scheduled Job Run',
    `You are running the scheduled job "${job.name}" (job_id ${job._id.toHexString()}), schedule \`${job.cronExpression}\` (${describeCron(job.cronExpression)}, ${timezone}).`,
    when,
    "The user message is the job's instruction. Nobody is watching live: carry it out with your tools and write the result as your reply in this chat, where the owner will read it.",
  ].join('\n');
}
