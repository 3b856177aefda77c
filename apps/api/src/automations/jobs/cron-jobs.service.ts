import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  CRONJOB_NEXT_RUNS,
  type CreateCronJobRequest,
  type CronJobView,
  type CronPreview,
  type CronRunView,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import {
  AutomationRunsService,
  type RunPage,
} from '../automation-runs.service';
import {
  checkCronExpression,
  describeCron,
} from '../schedule-math/cron-schedule';
import { ChatsService } from '../../chats/chats.service';
import { Clock } from '../../clock/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { AppEventBus } from '../../events/app-event-bus';
import { SettingsService } from '../../settings/settings.service';
import { checkCronJobInput } from './cron-job-input';
import { CronScheduler, cronChatTitle } from './cron-scheduler';
import { CronJobRecord } from './schemas/cron-job.schema';

export type ChangedBy = 'owner' | 'ai';

/** Scheduled jobs: create, edit, pause, delete, run now, and their views (REST and manage_cronjob alike). */
@Injectable()
export class CronJobsService {
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
  ) {}

  async list(): Promise<CronJobView[]> {
    const jobs = await this.jobs
      .find({})
      .sort({ createdAt: 1, _id: 1 })
      .lean<CronJobRecord[]>()
      .exec();
    const timezone = await this.timezone();
    // One instant for the whole list, so jobs sharing a schedule share its next-runs lookup.
    const now = this.clock.now();
    return jobs.map((job) => this.toView(job, timezone, now));
  }

  async get(id: string): Promise<CronJobView> {
    return this.toView(await this.record(id), await this.timezone());
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

  /** Checks everything, then makes the job and its chat. */
  async create(
    request: CreateCronJobRequest,
    by: ChangedBy,
  ): Promise<CronJobView> {
    const timezone = await this.timezone();
    const now = this.clock.now();
    const fields = checkCronJobInput(request, 'create', timezone, now);
    const _id = new Types.ObjectId();
    const name = fields.name as string;
    const chat = await this.chats.create(cronChatTitle(name), 'cron');
    const job: CronJobRecord = {
      _id,
      name,
      instruction: fields.instruction as string,
      cronExpression: fields.cronExpression as string,
      enabled: fields.enabled ?? true,
      chatId: new Types.ObjectId(chat.id),
      lastDueAt: now,
      consecutiveFailures: 0,
      lastRun: null,
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
    return this.toView(job, timezone);
  }

  async update(
    id: string,
    request: UpdateCronJobRequest,
    by: ChangedBy,
  ): Promise<CronJobView> {
    const job = await this.record(id);
    const timezone = await this.timezone();
    const now = this.clock.now();
    const fields = checkCronJobInput(request, 'update', timezone, now);
    const set: Partial<CronJobRecord> = { ...fields, updatedAt: now };
    const rescheduled =
      (fields.cronExpression !== undefined &&
        fields.cronExpression !== job.cronExpression) ||
      (fields.enabled === true && job.enabled === false);
    // A new schedule or a resume starts now: nothing is owed for the time before.
    if (rescheduled) set.lastDueAt = now;
    if (fields.name !== undefined && fields.name !== job.name && job.chatId) {
      await this.chats
        .rename(job.chatId.toHexString(), cronChatTitle(fields.name))
        .catch(() => undefined);
    }
    const updated = await this.jobs
      .findOneAndUpdate({ _id: job._id }, { $set: set }, { new: true })
      .lean<CronJobRecord>()
      .exec();
    if (!updated) throw notFound(id);
    await this.changed(updated, 'updated', by);
    return this.toView(updated, timezone);
  }

  async toggle(id: string, by: ChangedBy): Promise<CronJobView> {
    const job = await this.record(id);
    return this.update(id, { enabled: job.enabled === false }, by);
  }

  /** Deletes the job, its chat (stopping a running run) and its run history. */
  async remove(id: string, by: ChangedBy): Promise<void> {
    const job = await this.record(id);
    await this.jobs.deleteOne({ _id: job._id }).exec();
    await this.changed(job, 'deleted', by);
    if (job.chatId)
      await this.chats.remove(job.chatId.toHexString()).catch(() => undefined);
    await this.runs.removeAll('cron', id);
  }

  async runNow(id: string): Promise<CronRunView> {
    return this.scheduler.runNow(await this.record(id));
  }

  async history(id: string, page: RunPage): Promise<CronRunView[]> {
    await this.record(id);
    return this.runs.list('cron', id, page);
  }

  private async changed(
    job: CronJobRecord,
    change: 'created' | 'updated' | 'deleted',
    by: ChangedBy,
  ): Promise<void> {
    const jobId = job._id;
    if (change === 'deleted') await this.scheduler.remove(jobId.toHexString());
    else await this.scheduler.upsert(job);
    this.events.emit('cronjobs.changed', {
      jobId: jobId.toHexString(),
      change,
      by,
      at: this.clock.now().toISOString(),
    });
  }

  private async record(id: string): Promise<CronJobRecord> {
    if (!Types.ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id))
      throw notFound(id);
    const job = await this.jobs.findById(id).lean<CronJobRecord>().exec();
    if (!job) throw notFound(id);
    return job;
  }

  private async timezone(): Promise<string> {
    return (await this.settings.get()).timezone;
  }

  private toView(
    raw: CronJobRecord,
    timezone: string,
    now = this.clock.now(),
  ): CronJobView {
    const id = raw._id.toHexString();
    const expression =
      typeof raw.cronExpression === 'string' ? raw.cronExpression : '';
    const check = checkCronExpression(
      expression,
      timezone,
      now,
      CRONJOB_NEXT_RUNS,
    );
    const enabled = raw.enabled !== false;
    const failures =
      typeof raw.consecutiveFailures === 'number' ? raw.consecutiveFailures : 0;
    return {
      id,
      name:
        typeof raw.name === 'string' && raw.name ? raw.name : 'Untitled job',
      instruction: typeof raw.instruction === 'string' ? raw.instruction : '',
      cronExpression: expression,
      enabled,
      chatId:
        raw.chatId instanceof Types.ObjectId ? raw.chatId.toHexString() : null,
      description: check.ok ? describeCron(expression) : expression,
      nextRuns:
        check.ok && enabled ? check.nextRuns.map((d) => d.toISOString()) : [],
      timezone,
      scheduleError: check.ok ? null : check.error,
      lastRun: raw.lastRun ?? null,
      consecutiveFailures: failures,
      failing: failures >= this.config.automations.failureAlertAfter,
      running: this.scheduler.isRunning(id),
      createdAt: toIso(raw.createdAt),
      updatedAt: toIso(raw.updatedAt ?? raw.createdAt),
    };
  }
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`Scheduled job '${id}' not found`);
}

function toIso(value: unknown): string {
  return value instanceof Date
    ? value.toISOString()
    : new Date(0).toISOString();
}
