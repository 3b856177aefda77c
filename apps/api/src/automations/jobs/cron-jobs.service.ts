import {
  BadRequestException,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  CRONJOB_NEXT_RUNS,
  DEFAULT_JOB_MAX_ROUNDS,
  DEFAULT_JOB_MAX_TOKENS_PER_RUN,
  type CreateCronJobRequest,
  type CronJobView,
  type CronPreview,
  type CronRunView,
  type MailTriggerView,
  type MailWatchView,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import { AccountCredentials } from '../../accounts/account-records';
import {
  AutomationRunsService,
  type RunPage,
} from '../automation-runs.service';
import {
  checkCronExpression,
  describeCron,
} from '../schedule-math/cron-schedule';
import { DEFAULT_MODE } from '../../ai-tools/ai-tool';
import { AiToolRegistry } from '../../ai-tools/ai-tool-registry';
import { ChatsService } from '../../chats/chats.service';
import { Clock } from '../../clock/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { AppEventBus } from '../../events/app-event-bus';
import type { TurnSource } from '../../llm/turn-source';
import { SettingsService } from '../../settings/settings.service';
import { checkCronJobInput, type CronJobFields } from './cron-job-input';
import { CronScheduler, cronChatTitle } from './cron-scheduler';
import { jobOwnChat, OtherJobsOfChat } from './job-chat';
import {
  actOnOwnToolsOf,
  runLimitsOf,
  MAX_JOB_ID_LENGTH,
  isHashedJobId,
  isStoredMailTrigger,
  jobIdCandidates,
  jobIdOf,
  jobShapeProblems,
  malformedJobError,
} from './job-record-shape';
import { MailTriggerWatcher } from './mail-trigger-watcher';
import {
  CronJobRecord,
  type StoredMailTrigger,
} from './schemas/cron-job.schema';

export type ChangedBy = 'owner' | 'ai';

/** The AI turn asking for a change (manage_cronjob, db_query). */
export interface JobTurn {
  source: TurnSource;
  /** The turn's assistant message (its chat when unknown): one unattended run creates at most one job. */
  turnId: string | null;
}

/** Turns nobody watches: each may create at most this many jobs. */
export const UNATTENDED_TURN_SOURCES: ReadonlySet<TurnSource> = new Set([
  'cron',
  'pulse',
  'auto-reply',
]);
export const MAX_JOBS_PER_UNATTENDED_TURN = 1;
/** How many unattended turns' create counts are remembered (the oldest are forgotten first). */
const REMEMBERED_TURNS = 1000;

/** Scheduled jobs: create, edit, pause, delete, run now, and their views (REST and manage_cronjob alike). */
@Injectable()
export class CronJobsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(CronJobsService.name);
  /** Whether another job points at a job's chat (see OtherJobsOfChat). */
  private readonly otherJobs = new OtherJobsOfChat(() => this.jobs.collection);

  constructor(
    @InjectModel(CronJobRecord.name)
    private readonly jobs: Model<CronJobRecord>,
    private readonly scheduler: CronScheduler,
    private readonly runs: AutomationRunsService,
    private readonly chats: ChatsService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tools: AiToolRegistry,
    private readonly credentials: AccountCredentials,
    private readonly watcher: MailTriggerWatcher,
  ) {}

  private creating: Promise<unknown> = Promise.resolve();
  /** Jobs created per unattended turn (insertion order = age). */
  private readonly createdInTurn = new Map<string, number>();

  /**
   * Drops the unique, partial and TTL indexes db_query could create on
   * `cronjobs` before they were refused: they make the app's own writes fail
   * or delete its jobs. The app itself makes none.
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      const indexes = await this.jobs.collection.indexes();
      for (const index of indexes) {
        if (index.name === '_id_' || !index.name) continue;
        if (
          index.unique ||
          index.partialFilterExpression !== undefined ||
          index.expireAfterSeconds !== undefined
        ) {
          await this.jobs.collection.dropIndex(index.name);
          this.logger.warn(
            `Dropped the index "${index.name}" on cronjobs: a unique, partial or TTL index there breaks the scheduled jobs.`,
          );
        }
      }
    } catch {
      // No collection yet: nothing to drop.
    }
  }

  async list(): Promise<CronJobView[]> {
    const jobs = (await this.jobs.collection
      .find({})
      .sort({ createdAt: 1, _id: 1 })
      .toArray()) as unknown as CronJobRecord[];
    const timezone = await this.timezone();
    const addresses = await this.mailAddresses();
    // One instant for the whole list, so jobs sharing a schedule share its next-runs lookup.
    const now = this.clock.now();
    return jobs.map((job) => this.toView(job, timezone, addresses, now));
  }

  async get(id: string): Promise<CronJobView> {
    const job = await this.record(id);
    return this.toView(job, await this.timezone(), await this.mailAddresses());
  }

  async preview(cronExpression: string): Promise<CronPreview> {
    const timezone = await this.timezone();
    const check = checkCronExpression(
      cronExpression,
      timezone,
      this.clock.now(),
      CRONJOB_NEXT_RUNS,
    );
    return check.ok
      ? {
          valid: true,
          error: null,
          description: describeCron(cronExpression.trim()),
          nextRuns: check.nextRuns.map((d) => d.toISOString()),
          timezone,
        }
      : {
          valid: false,
          error: check.error,
          description: null,
          nextRuns: [],
          timezone,
        };
  }

  /**
   * Checks everything, then makes the job and its chat. Refused (400) past
   * MAX_CRONJOBS jobs, or past one job in an unattended run (cron, pulse, auto-reply).
   */
  async create(
    request: CreateCronJobRequest,
    by: ChangedBy,
    turn?: JobTurn,
  ): Promise<CronJobView> {
    const [view] = await this.createMany([request], by, turn);
    return view;
  }

  /** Creates several jobs after checking all of them and the limits: all or nothing is checked up front. */
  async createMany(
    requests: readonly CreateCronJobRequest[],
    by: ChangedBy,
    turn?: JobTurn,
  ): Promise<CronJobView[]> {
    const timezone = await this.timezone();
    const now = this.clock.now();
    const checked = requests.map((request, index) => {
      try {
        return checkCronJobInput(
          request,
          'create',
          timezone,
          now,
          this.modeNames(),
          this.actOnOwnCheck,
        );
      } catch (error) {
        if (requests.length > 1 && error instanceof BadRequestException)
          throw new BadRequestException(
            `Job ${index + 1}: ${error.message} (nothing was created)`,
          );
        throw error;
      }
    });
    for (const [index, fields] of checked.entries()) {
      try {
        await this.checkMailAccount(fields);
      } catch (error) {
        if (requests.length > 1 && error instanceof BadRequestException)
          throw new BadRequestException(
            `Job ${index + 1}: ${error.message} (nothing was created)`,
          );
        throw error;
      }
    }
    // One create at a time, so two at once cannot both pass the limit.
    const work = this.creating.then(async () => {
      await this.checkLimits(checked.length, turn);
      const views: CronJobView[] = [];
      const addresses = await this.mailAddresses();
      for (const fields of checked)
        views.push(await this.insert(fields, by, timezone, addresses));
      this.countCreates(checked.length, turn);
      return views;
    });
    this.creating = work.catch(() => undefined);
    return work;
  }

  private async checkLimits(count: number, turn?: JobTurn): Promise<void> {
    const max = this.config.automations.maxCronJobs;
    const existing = await this.jobs.collection.countDocuments({});
    if (existing + count > max) {
      throw new BadRequestException(
        `At most ${max} scheduled jobs may exist (MAX_CRONJOBS); there are ${existing}. Delete a job before creating another.`,
      );
    }
    const key = turnKey(turn);
    if (key === null) return;
    const made = this.createdInTurn.get(key) ?? 0;
    if (made + count > MAX_JOBS_PER_UNATTENDED_TURN) {
      throw new BadRequestException(
        `An unattended run (${turn?.source}) may create at most ${MAX_JOBS_PER_UNATTENDED_TURN} scheduled job; ` +
          `${made ? 'this run already created one' : `${count} were asked for`}. The owner can create more.`,
      );
    }
  }

  private countCreates(count: number, turn?: JobTurn): void {
    const key = turnKey(turn);
    if (key === null) return;
    this.createdInTurn.delete(key);
    this.createdInTurn.set(key, (this.createdInTurn.get(key) ?? 0) + count);
    while (this.createdInTurn.size > REMEMBERED_TURNS) {
      const oldest = this.createdInTurn.keys().next().value as string;
      this.createdInTurn.delete(oldest);
    }
  }

  /** A mail trigger must name a stored email account (400 otherwise, before anything is written). */
  private async checkMailAccount(fields: CronJobFields): Promise<void> {
    const trigger = fields.mailTrigger;
    if (!trigger) return;
    const account = await this.credentials.get(trigger.accountId);
    if (!account)
      throw new BadRequestException(
        `mail trigger account '${trigger.accountId.slice(0, 64)}' does not exist (GET /api/accounts lists the accounts)`,
      );
    if (account.kind !== 'email')
      throw new BadRequestException(
        `mail trigger account '${account.name}' is a ${account.kind} account; choose an email account`,
      );
  }

  private async insert(
    fields: CronJobFields,
    by: ChangedBy,
    timezone: string,
    addresses: Map<string, string>,
  ): Promise<CronJobView> {
    const now = this.clock.now();
    const _id = new Types.ObjectId();
    const name = fields.name as string;
    const chat = await this.chats.create(cronChatTitle(name), 'cron');
    const job: CronJobRecord = {
      _id,
      name,
      instruction: fields.instruction as string,
      cronExpression: fields.cronExpression ?? null,
      mailTrigger: fields.mailTrigger ?? null,
      mailCursor: null,
      enabled: fields.enabled ?? true,
      // A mail-triggered job reads the new mail first: it starts in the email mode unless told otherwise.
      mode:
        fields.mode ??
        (fields.mailTrigger && this.modeNames().includes('email')
          ? 'email'
          : DEFAULT_MODE),
      actOnOwnTools: fields.actOnOwnTools ?? [],
      maxRounds: fields.maxRounds ?? DEFAULT_JOB_MAX_ROUNDS,
      maxTokensPerRun: fields.maxTokensPerRun ?? DEFAULT_JOB_MAX_TOKENS_PER_RUN,
      chatId: new Types.ObjectId(chat.id),
      lastDueAt: now,
      consecutiveFailures: 0,
      lastRun: null,
      createdBy: by,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.jobs.collection.insertOne(job);
    } catch (error) {
      await this.chats.remove(chat.id).catch(() => undefined);
      throw error;
    }
    await this.changed(job, 'created', by);
    return this.toView(job, timezone, addresses);
  }

  async update(
    id: string,
    request: UpdateCronJobRequest,
    by: ChangedBy,
  ): Promise<CronJobView> {
    const job = await this.record(id);
    const timezone = await this.timezone();
    const now = this.clock.now();
    const fields = checkCronJobInput(
      request,
      'update',
      timezone,
      now,
      this.modeNames(),
      this.actOnOwnCheck,
    );
    await this.checkMailAccount(fields);
    const set: Partial<CronJobRecord> = { ...fields, updatedAt: now };
    const rescheduled =
      (typeof fields.cronExpression === 'string' &&
        fields.cronExpression !== job.cronExpression) ||
      (fields.enabled === true && job.enabled === false);
    // The cursor belongs to one folder of one account: another starts at its newest message.
    // A resume starts there too, like a resumed schedule: mail that came while paused is not run.
    if (
      (fields.mailTrigger !== undefined &&
        !sameMailTrigger(fields.mailTrigger, job.mailTrigger)) ||
      (fields.enabled === true && job.enabled === false)
    )
      set.mailCursor = null;
    // A new schedule or a resume starts now: nothing is owed for the time before.
    if (rescheduled) set.lastDueAt = now;
    const ownChat = await this.ownChatId(job);
    if (fields.name !== undefined && fields.name !== job.name && ownChat) {
      await this.chats
        .rename(ownChat.toHexString(), cronChatTitle(fields.name))
        .catch(() => undefined);
    }
    const updated = (await this.jobs.collection.findOneAndUpdate(
      { _id: job._id },
      { $set: set },
      { returnDocument: 'after' },
    )) as CronJobRecord | null;
    if (!updated) throw notFound(id);
    await this.changed(updated, 'updated', by);
    return this.toView(updated, timezone, await this.mailAddresses());
  }

  async toggle(id: string, by: ChangedBy): Promise<CronJobView> {
    const job = await this.record(id);
    return this.update(id, { enabled: job.enabled === false }, by);
  }

  /**
   * Deletes the job, its own chat (stopping a running run) and its run history.
   * A malformed job (any `_id`) can be deleted too; a chat another job or the
   * owner uses is never deleted with it.
   */
  async remove(id: string, by: ChangedBy): Promise<void> {
    const job = await this.record(id);
    const ownChat = await this.ownChatId(job);
    await this.jobs.collection.deleteOne({ _id: job._id });
    await this.changed(job, 'deleted', by);
    if (ownChat)
      await this.chats.remove(ownChat.toHexString()).catch(() => undefined);
    if (job._id instanceof Types.ObjectId)
      await this.runs.removeAll('cron', job._id.toHexString());
  }

  /** The ids of the stored jobs a db_query filter matches (at most `limit`; 0 = all). */
  async idsMatching(
    filter: Record<string, unknown>,
    limit: number,
  ): Promise<string[]> {
    const docs = await this.jobs.collection
      .find(filter, { projection: { _id: 1 }, limit, maxTimeMS: 5000 })
      .toArray();
    return docs.map((doc) => jobIdOf(doc._id));
  }

  private ownChatId(job: CronJobRecord): Promise<Types.ObjectId | null> {
    return jobOwnChat(this.otherJobs, this.chats, job);
  }

  async runNow(id: string): Promise<CronRunView> {
    const job = await this.record(id);
    const problems = jobShapeProblems(job);
    if (problems.length)
      throw new BadRequestException(malformedJobError(problems));
    return this.scheduler.runNow(job);
  }

  async history(id: string, page: RunPage): Promise<CronRunView[]> {
    const job = await this.record(id);
    // A malformed job (not an ObjectId) never ran.
    if (!(job._id instanceof Types.ObjectId)) return [];
    return this.runs.list('cron', job._id.toHexString(), page);
  }

  private async changed(
    job: CronJobRecord,
    change: 'created' | 'updated' | 'deleted',
    by: ChangedBy,
  ): Promise<void> {
    const jobId = jobIdOf(job._id);
    if (change === 'deleted') await this.scheduler.remove(jobId);
    else await this.scheduler.upsert(job);
    this.events.emit('cronjobs.changed', {
      jobId,
      change,
      by,
      at: this.clock.now().toISOString(),
    });
  }

  /** The stored job with this API id; malformed ids (string, number) are found too. */
  private async record(id: string): Promise<CronJobRecord> {
    if (!id || id.length > MAX_JOB_ID_LENGTH) throw notFound(id);
    const candidates = isHashedJobId(id)
      ? await this.idsHashedAs(id)
      : jobIdCandidates(id);
    const job = candidates.length
      ? ((await this.jobs.collection.findOne({
          _id: { $in: candidates } as never,
        })) as CronJobRecord | null)
      : null;
    if (!job) throw notFound(id);
    return job;
  }

  /** The stored `_id`s whose API id is this `sha256:` id (ids too long to show whole). */
  private async idsHashedAs(id: string): Promise<unknown[]> {
    const docs = await this.jobs.collection
      .find({}, { projection: { _id: 1 }, maxTimeMS: 5000 })
      .toArray();
    return docs
      .map((doc) => doc._id)
      .filter((stored) => jobIdOf(stored) === id);
  }

  /** A job may act on its own only with a registered tool that does not grant permissions. */
  private readonly actOnOwnCheck = (name: string): string | null => {
    const tool = this.tools.tool(name);
    if (!tool)
      return `actOnOwnTools: '${name.slice(0, 64)}' is not a tool (see GET /api/tools)`;
    if (tool.grantsAccess)
      return `actOnOwnTools: '${name}' changes permissions; a job never runs it`;
    return null;
  };

  private modeNames(): string[] {
    return this.tools.modes().map((m) => m.name);
  }

  private async timezone(): Promise<string> {
    return (await this.settings.get()).timezone;
  }

  /** Email account id → address, for the job views' mail triggers. */
  private async mailAddresses(): Promise<Map<string, string>> {
    return new Map(
      (await this.credentials.list('email')).map((a) => [
        a.id,
        a.kind === 'email' ? a.address : a.name,
      ]),
    );
  }

  private toView(
    raw: CronJobRecord,
    timezone: string,
    addresses: Map<string, string>,
    now = this.clock.now(),
  ): CronJobView {
    const id = jobIdOf(raw._id);
    const storedTrigger: unknown = raw.mailTrigger;
    const trigger = isStoredMailTrigger(storedTrigger) ? storedTrigger : null;
    const expression =
      typeof raw.cronExpression === 'string' ? raw.cronExpression : '';
    const problems = jobShapeProblems(raw);
    const check = problems.length
      ? { ok: false as const, error: malformedJobError(problems) }
      : trigger
        ? { ok: true as const, nextRuns: [] as Date[] }
        : checkCronExpression(expression, timezone, now, CRONJOB_NEXT_RUNS);
    const enabled = raw.enabled !== false;
    const mailTrigger: MailTriggerView | null = trigger && {
      accountId: trigger.accountId,
      folder: trigger.folder,
      address: addresses.get(trigger.accountId) ?? null,
    };
    const mailWatch: MailWatchView | null =
      mailTrigger && enabled && !problems.length
        ? (this.watcher.status(id) ?? { state: 'connecting', reason: null })
        : null;
    const failures =
      typeof raw.consecutiveFailures === 'number' ? raw.consecutiveFailures : 0;
    return {
      id,
      name:
        typeof raw.name === 'string' && raw.name ? raw.name : 'Untitled job',
      instruction: typeof raw.instruction === 'string' ? raw.instruction : '',
      cronExpression: trigger ? null : expression,
      mailTrigger,
      mailWatch,
      enabled,
      mode: typeof raw.mode === 'string' ? raw.mode : DEFAULT_MODE,
      actOnOwnTools: actOnOwnToolsOf(raw),
      ...runLimitsOf(raw),
      chatId:
        raw.chatId instanceof Types.ObjectId ? raw.chatId.toHexString() : null,
      description: mailTrigger
        ? `When new mail arrives in ${mailTrigger.address ?? 'a removed account'} · ${mailTrigger.folder}`
        : check.ok
          ? describeCron(expression)
          : expression,
      createdBy:
        raw.createdBy === 'owner' || raw.createdBy === 'ai'
          ? raw.createdBy
          : null,
      nextRuns:
        check.ok && enabled ? check.nextRuns.map((d) => d.toISOString()) : [],
      timezone,
      scheduleError: check.ok ? null : check.error,
      lastRun: isRunView(raw.lastRun) ? raw.lastRun : null,
      consecutiveFailures: failures,
      failing: failures >= this.config.automations.failureAlertAfter,
      running: this.scheduler.isRunning(id),
      createdAt: toIso(raw.createdAt),
      updatedAt: toIso(raw.updatedAt ?? raw.createdAt),
    };
  }
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`Scheduled job '${id.slice(0, 200)}' not found`);
}

function sameMailTrigger(
  next: StoredMailTrigger | null,
  stored: unknown,
): boolean {
  if (next === null) return stored === null || stored === undefined;
  return (
    isStoredMailTrigger(stored) &&
    stored.accountId === next.accountId &&
    stored.folder === next.folder
  );
}

function turnKey(turn: JobTurn | undefined): string | null {
  if (!turn || !UNATTENDED_TURN_SOURCES.has(turn.source)) return null;
  return `${turn.source}:${turn.turnId ?? '?'}`;
}

function isRunView(value: unknown): value is CronRunView {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as CronRunView).outcome === 'string' &&
    typeof (value as CronRunView).startedAt === 'string'
  );
}

function toIso(value: unknown): string {
  return value instanceof Date
    ? value.toISOString()
    : new Date(0).toISOString();
}
