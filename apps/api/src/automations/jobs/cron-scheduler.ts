import {
  ConflictException,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { OnEvent } from '@nestjs/event-emitter';
import { Types, type Model } from 'mongoose';
import {
  type AppEventMap,
  type CronRunView,
  type RunTrigger,
  type TaintMark,
} from '@metatronos/shared-types';
import {
  AutomationRunsService,
  type RunStart,
} from '../automation-runs.service';
import { AutomationTicker, type Schedulable } from '../automation-ticker';
import { retryWhileBusy } from '../busy-retry';
import { toRunView } from '../run-views';
import {
  cronOccurrencesBetween,
  describeCron,
  nextCronRuns,
} from '../schedule-math/cron-schedule';
import { ChatReplyService } from '../../chats/chat-reply.service';
import { ChatsService } from '../../chats/chats.service';
import { Clock } from '../../clock/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { AppEventBus } from '../../events/app-event-bus';
import { formatPromptDateTime } from '../../system-instruction/core-prompt-sections';
import { SettingsService } from '../../settings/settings.service';
import { jobOwnChat, OtherJobsOfChat } from './job-chat';
import {
  actOnOwnToolsOf,
  jobIdOf,
  jobShapeProblems,
  runLimitsOf,
} from './job-record-shape';
import {
  mailRunContext,
  mailRunMessage,
  type NewMailSummary,
} from './mail-run-prompt';
import { CronJobRecord } from './schemas/cron-job.schema';

/** How long a new message waits for a run still going in its job's chat before it is recorded as skipped (busy). */
export const MAIL_RUN_BUSY_WAIT_MS = 10 * 60_000;
const MAIL_RUN_BUSY_POLL_MS = 1_000;

/** A due time handled within this long of its time counts as on time; later, as a catch-up. */
export const ON_TIME_TOLERANCE_MS = 60_000;

/** What a run needs of its job. */
type RunnableJob = Pick<
  CronJobRecord,
  | '_id'
  | 'name'
  | 'instruction'
  | 'cronExpression'
  | 'mailTrigger'
  | 'chatId'
  | 'mode'
  | 'actOnOwnTools'
  | 'maxRounds'
  | 'maxTokensPerRun'
>;

/** What the scheduler keeps of an enabled job with a valid schedule. */
interface Entry {
  job: RunnableJob & { cronExpression: string };
  lastDueAt: Date;
  nextDue: Date | null;
}

/** What a tick decided for one due job, before anything is written. */
interface Decision {
  entry: Entry;
  latest: Date;
  missed: number;
  trigger: RunTrigger | null;
  decidedAt: Date;
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
  /** Loads, changes and ticks run one after another, so none reads a due time another is moving. */
  private queue: Promise<void> = Promise.resolve();

  /** Whether another job points at a run's chat: the runs a minute starts ask in one query. */
  private readonly otherJobs = new OtherJobsOfChat(() => this.jobs.collection);

  constructor(
    @InjectModel(CronJobRecord.name)
    private readonly jobs: Model<CronJobRecord>,
    private readonly runs: AutomationRunsService,
    private readonly replies: ChatReplyService,
    private readonly chats: ChatsService,
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
      if (entry.nextDue && (!earliest || entry.nextDue < earliest))
        earliest = entry.nextDue;
    }
    return earliest;
  }

  /** Reads every job again (at start, after db_query wrote `cronjobs`, after a timezone change) and re-arms the ticker. */
  async reload(): Promise<void> {
    await this.serial(() => this.load()).catch((error: Error) =>
      this.logger.error(`Could not load the scheduled jobs: ${error.message}`),
    );
    this.ticker.rearm();
  }

  /** One job was created or changed through the service: schedule it (or drop it when paused). */
  async upsert(job: CronJobRecord): Promise<void> {
    await this.serial(async () => {
      const { timezone } = await this.settings.get();
      const entry = this.entryFor(job, timezone);
      if (entry) this.entries.set(jobIdOf(job._id), entry);
      else this.entries.delete(jobIdOf(job._id));
    });
    this.ticker.rearm();
  }

  async remove(jobId: string): Promise<void> {
    await this.serial(async () => void this.entries.delete(jobId));
    this.ticker.rearm();
  }

  /** The AI changed `cronjobs` through db_query: schedule what it wrote. */
  @OnEvent('data.changed')
  async onDataChanged(event: AppEventMap['data.changed']): Promise<void> {
    if (event.collection !== 'cronjobs') return;
    await this.reload();
    this.events.emit('cronjobs.changed', {
      jobId: '*',
      change: 'updated',
      by: 'ai',
      at: this.clock.now().toISOString(),
    });
  }

  /** Another timezone moves every job. */
  @OnEvent('settings.updated')
  async onSettingsUpdated(): Promise<void> {
    await this.reload();
  }

  tick(now: Date): Promise<void> {
    return this.serial(() => this.fireDue(now));
  }

  /** "Run now": 409 while the job (or a reply in its chat) is running. */
  async runNow(job: CronJobRecord): Promise<CronRunView> {
    const id = job._id.toHexString();
    if (!this.claim(id, job.chatId))
      throw new ConflictException(
        'This job is already running. Wait for the run to finish.',
      );
    return this.startClaimed(job, 'manual', null, this.clock.now());
  }

  /**
   * Checks and marks the job running in one synchronous step, so two "Run now"
   * clicks (or a click and the schedule) cannot both pass the check before
   * either is marked: the in-process lock a FerretDB claim cannot give.
   */
  private claim(jobId: string, chatId: Types.ObjectId | null): boolean {
    if (this.isBusy(jobId, chatId)) return false;
    this.running.add(jobId);
    return true;
  }

  /** `start` for a claimed job: a failure before the run exists gives the claim back. */
  private async startClaimed(
    job: RunnableJob,
    trigger: RunTrigger,
    dueAt: Date | null,
    startedAt: Date,
  ): Promise<CronRunView> {
    try {
      return await this.start(job, trigger, dueAt, startedAt);
    } catch (error) {
      this.running.delete(job._id.toHexString());
      throw error;
    }
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private isBusy(jobId: string, chatId: Types.ObjectId | null): boolean {
    return (
      this.running.has(jobId) ||
      (!!chatId && this.replies.isRunning(chatId.toHexString()))
    );
  }

  private async load(): Promise<void> {
    const { timezone } = await this.settings.get();
    const now = this.clock.now();
    const jobs = (await this.jobs.collection
      .find({})
      .toArray()) as unknown as CronJobRecord[];
    const entries = new Map<string, Entry>();
    const unstarted: Types.ObjectId[] = [];
    for (const job of jobs) {
      // A malformed document (written by db_query before its writes were checked) is listed, never run.
      if (jobShapeProblems(job).length) continue;
      if (!(job.lastDueAt instanceof Date)) {
        // Written by db_query without a start point: its schedule starts now, nothing is owed from before.
        job.lastDueAt = now;
        unstarted.push(job._id);
      }
      const entry = this.entryFor(job, timezone);
      if (entry) entries.set(job._id.toHexString(), entry);
    }
    if (unstarted.length)
      await this.jobs
        .updateMany({ _id: { $in: unstarted } }, { $set: { lastDueAt: now } })
        .exec();
    this.entries = entries;
  }

  private entryFor(job: CronJobRecord, timezone: string): Entry | null {
    if (
      jobShapeProblems(job).length ||
      job.enabled === false ||
      typeof job.cronExpression !== 'string' ||
      !(job.lastDueAt instanceof Date)
    )
      return null;
    const [nextDue] = nextCronRuns(
      job.cronExpression,
      timezone,
      job.lastDueAt,
      1,
    );
    if (!nextDue) return null;
    const { _id, name, instruction, cronExpression, chatId } = job;
    return {
      job: {
        _id,
        name: typeof name === 'string' && name ? name : 'Untitled job',
        instruction: String(instruction ?? ''),
        cronExpression,
        chatId,
        mode: typeof job.mode === 'string' ? job.mode : undefined,
        actOnOwnTools: actOnOwnToolsOf(job),
        ...runLimitsOf(job),
      },
      lastDueAt: job.lastDueAt,
      nextDue,
    };
  }

  /**
   * Decides for every due job first (in memory, no I/O), stores the handled
   * times, then starts the runs side by side.
   */
  private async fireDue(now: Date): Promise<void> {
    const due = [...this.entries.values()].filter(
      (entry) => entry.nextDue && entry.nextDue <= now,
    );
    if (!due.length) return;
    const { timezone } = await this.settings.get();
    const decisions = due
      .map((entry) => this.decide(entry, now, timezone))
      .filter((d): d is Decision => d !== null);
    // One `updateMany` per distinct due time (usually one) instead of a statement per job. (Upstream FerretDB
    // 1.24 never answered a bulkWrite of ~100 updates; the launcher's update-held-writes patch mends that.)
    const byTime = new Map<number, Types.ObjectId[]>();
    for (const d of decisions)
      byTime.set(d.latest.getTime(), [
        ...(byTime.get(d.latest.getTime()) ?? []),
        d.entry.job._id,
      ]);
    try {
      for (const [time, ids] of byTime) {
        await retryWhileBusy(() =>
          this.jobs
            .updateMany(
              { _id: { $in: ids } },
              { $set: { lastDueAt: new Date(time) } },
            )
            .exec(),
        );
      }
    } catch (error) {
      // The runs still start: at worst a restart before the next write catches one of them up again.
      this.logger.warn(
        `Could not store the handled due times: ${(error as Error).message}`,
      );
    }
    for (const decision of decisions) void this.act(decision, timezone);
  }

  /** Every time due in (lastDueAt, now]: the latest runs (on time or as a catch-up) unless too old; the rest are recorded as missed. */
  private decide(entry: Entry, now: Date, timezone: string): Decision | null {
    const { cronExpression } = entry.job;
    const due = entry.nextDue as Date;
    // Almost always exactly one time is due: the one after it is the next due time.
    const [afterDue] = nextCronRuns(cronExpression, timezone, due, 1);
    let count = 1;
    let latest = due;
    if (afterDue && afterDue <= now)
      ({ count, latest } = cronOccurrencesBetween(
        cronExpression,
        timezone,
        entry.lastDueAt,
        now,
      ) as { count: number; latest: Date });
    entry.lastDueAt = latest;
    entry.nextDue =
      afterDue && afterDue > now
        ? afterDue
        : (nextCronRuns(cronExpression, timezone, now, 1)[0] ?? null);
    const late = now.getTime() - latest.getTime();
    const runsLatest =
      late <=
      Math.max(this.config.automations.catchUpWindowMs, ON_TIME_TOLERANCE_MS);
    return {
      entry,
      latest,
      missed: runsLatest ? count - 1 : count,
      trigger: runsLatest
        ? late <= ON_TIME_TOLERANCE_MS
          ? 'schedule'
          : 'catch-up'
        : null,
      decidedAt: this.clock.now(),
    };
  }

  private async act(
    { entry, latest, missed, trigger, decidedAt }: Decision,
    timezone: string,
  ): Promise<void> {
    const { job } = entry;
    const start: RunStart = {
      kind: 'cron',
      jobId: job._id.toHexString(),
      chatId: job.chatId?.toHexString() ?? null,
      trigger: trigger ?? 'catch-up',
      dueAt: latest,
    };
    try {
      if (missed > 0) {
        const which = trigger
          ? 'earlier times'
          : `the last was due at ${formatPromptDateTime(latest, timezone)}`;
        await this.runs.recordWithoutTurn(
          { ...start, trigger: 'catch-up' },
          'missed',
          `${missed >= 1000 ? 'At least 1000' : missed} scheduled run${missed === 1 ? ' was' : 's were'} missed while MetatronOS was not running (${which}).`,
        );
      }
      if (!trigger) return;
      if (!this.claim(start.jobId as string, job.chatId)) {
        await this.runs.recordWithoutTurn(start, 'skipped', 'busy');
        return;
      }
      await this.startClaimed(job, trigger, latest, decidedAt);
    } catch (error) {
      this.logger.error(
        `Could not run the job "${job.name}": ${(error as Error).message}`,
      );
    }
  }

  /** Stores the run and sends the instruction to the job's chat (the job is already claimed). */
  private async start(
    job: RunnableJob,
    trigger: RunTrigger,
    dueAt: Date | null,
    startedAt: Date,
  ): Promise<CronRunView> {
    const { timezone } = await this.settings.get();
    const context = cronRunContext(job, trigger, dueAt ?? startedAt, timezone);
    return (
      await this.launch(
        job,
        trigger,
        dueAt,
        startedAt,
        job.instruction,
        context,
      )
    ).run;
  }

  /**
   * Runs a mail-triggered job for one new message; resolves when the run has
   * ended (null when the job is gone, paused or malformed). A run in the job's
   * chat still going is waited for (each message gets its run), up to
   * MAIL_RUN_BUSY_WAIT_MS; past that the message is recorded as skipped (busy).
   */
  async runForMail(
    jobId: Types.ObjectId,
    mail: NewMailSummary,
    stillWanted: () => boolean,
  ): Promise<CronRunView | null> {
    const waitUntil = this.clock.now().getTime() + MAIL_RUN_BUSY_WAIT_MS;
    for (;;) {
      if (!stillWanted()) return null;
      const job = (await this.jobs.collection.findOne({
        _id: jobId,
      })) as CronJobRecord | null;
      if (!job || job.enabled === false || jobShapeProblems(job).length)
        return null;
      const id = jobId.toHexString();
      if (this.claim(id, job.chatId)) {
        const context = mailRunContext(job, mail);
        const content = mailRunMessage(job.instruction, mail);
        // launch gives the claim back when it fails.
        const { ended } = await this.launch(
          job,
          'mail',
          mail.receivedAt,
          this.clock.now(),
          content,
          context,
          // email_actions works on the watched account, even with several connected.
          job.mailTrigger?.accountId,
          // The mail's sender and subject start the run: it is marked from the first token.
          [
            {
              by: 'mail-trigger',
              text: `an email from ${mail.from || 'an unknown sender'}`,
              at: this.clock.now().toISOString(),
            },
          ],
        );
        return ended;
      }
      if (this.clock.now().getTime() >= waitUntil) {
        return this.runs.recordWithoutTurn(
          {
            kind: 'cron',
            jobId: id,
            chatId: job.chatId?.toHexString() ?? null,
            trigger: 'mail',
            dueAt: mail.receivedAt,
          },
          'skipped',
          'busy',
        );
      }
      await new Promise((resolve) =>
        setTimeout(resolve, MAIL_RUN_BUSY_POLL_MS),
      );
    }
  }

  /** Stores the run, sends `content` to the job's chat; `ended` resolves with the finished run. */
  private async launch(
    job: RunnableJob,
    trigger: RunTrigger,
    dueAt: Date | null,
    startedAt: Date,
    content: string,
    context: string,
    accountId?: string,
    taint: TaintMark[] = [],
  ): Promise<{ run: CronRunView; ended: Promise<CronRunView> }> {
    const id = job._id.toHexString();
    // Claimed by the caller (claim), before any await.
    try {
      const chatId = await this.ensureChat(job);
      const run = await retryWhileBusy(() =>
        this.runs.begin(
          { kind: 'cron', jobId: id, trigger, dueAt, chatId },
          startedAt,
        ),
      );
      const ended = this.runs
        .runTurn(
          run,
          content,
          {
            source: 'cron',
            // Each run starts in the job's mode (missing: the chat's own, the default for a new job).
            mode: typeof job.mode === 'string' ? job.mode : undefined,
            prompt: { source: 'cron', extra: context },
            ...(accountId ? { accountId } : {}),
            policy: {
              jobId: id,
              actOnOwnTools: actOnOwnToolsOf(job),
              taint,
            },
            // A run's own limits: tool rounds, and tokens over all its model calls (the budget stops the next call).
            maxToolRounds: runLimitsOf(job).maxRounds,
            maxTokens: runLimitsOf(job).maxTokensPerRun,
          },
          async (view) => {
            await this.finished(job._id, view);
            // Free before the run reads as ended, so "Run now" right after it is accepted.
            this.running.delete(id);
          },
        )
        .finally(() => this.running.delete(id));
      return { run: toRunView(run), ended };
    } catch (error) {
      this.running.delete(id);
      throw error;
    }
  }

  private async finished(
    jobId: Types.ObjectId,
    run: CronRunView,
  ): Promise<void> {
    const update =
      run.outcome === 'success'
        ? { $set: { lastRun: run, consecutiveFailures: 0 } }
        : { $set: { lastRun: run }, $inc: { consecutiveFailures: 1 } };
    await retryWhileBusy(() =>
      this.jobs.updateOne({ _id: jobId }, update).exec(),
    );
  }

  /** The job's chat, made again if the owner deleted it. */
  private async ensureChat(job: RunnableJob): Promise<string> {
    const { chatId, created } = await this.runs.chatFor(
      await jobOwnChat(this.otherJobs, this.chats, job),
      cronChatTitle(job.name),
      'cron',
    );
    if (created) {
      job.chatId = new Types.ObjectId(chatId);
      await this.jobs
        .updateOne({ _id: job._id }, { $set: { chatId: job.chatId } })
        .exec();
    }
    return chatId;
  }
}

export function cronChatTitle(name: string): string {
  return `Job: ${name}`;
}

/** What the model is told about the run it is in (appended to the combined prompt). */
export function cronRunContext(
  job: Pick<CronJobRecord, '_id' | 'name' | 'cronExpression' | 'mailTrigger'>,
  trigger: RunTrigger,
  dueAt: Date,
  timezone: string,
): string {
  const when =
    trigger === 'manual'
      ? 'The owner started this run by hand ("Run now").'
      : trigger === 'catch-up'
        ? `This run was due at ${formatPromptDateTime(dueAt, timezone)} while MetatronOS was not running; it is being caught up now.`
        : `This run was due at ${formatPromptDateTime(dueAt, timezone)}.`;
  const expression = job.cronExpression;
  const trigger_ = expression
    ? `schedule \`${expression}\` (${describeCron(expression)}, ${timezone})`
    : `run by new mail in the folder "${job.mailTrigger?.folder ?? ''}"`;
  return [
    '## Scheduled Job Run',
    `You are running the scheduled job "${job.name}" (job_id ${job._id.toHexString()}), ${trigger_}.`,
    when,
    "The user message is the job's instruction. Nobody is watching live: carry it out with your tools and write the result as your reply in this chat, where the owner will read it.",
  ].join('\n');
}
