import {
  HttpException,
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  AutomationKind,
  CronRunView,
  RunOutcome,
  RunTrigger,
  TokenUsage,
} from '@metatronos/shared-types';
import type { ChatKind } from '@metatronos/shared-types';
import {
  ChatReplyService,
  type ReplyOptions,
} from '../chats/chat-reply.service';
import type { Collection } from 'mongodb';
import { driverCollection } from '../database/driver-collection';
import { GroupedInserts } from '../database/grouped-inserts';
import { StartUpWork } from '../database/start-up-work';
import { BudgetService } from '../budget/budget.service';
import { ChatsService } from '../chats/chats.service';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { toRunView } from './run-views';
import { AutomationRunRecord } from './schemas/automation-run.schema';

/** A run the budget refused before it wrote anything (paused, or a cap already used up). */
class BudgetSkip extends Error {}

const INTERRUPTED = 'This run was interrupted because the server stopped.';

export interface RunStart {
  kind: AutomationKind;
  jobId: string | null;
  trigger: RunTrigger;
  dueAt: Date | null;
  chatId: string | null;
}

export interface RunPage {
  limit: number;
  /** A run id: the runs started before it. */
  before?: string;
}

/** What a job or Pulse hears about its runs (to keep counters and "last run" on its own record). */
export type RunListener = (run: CronRunView) => void | Promise<void>;

/**
 * The run history of jobs and pulses, and the one way they run a turn: as a
 * message in their chat through the chat reply service (so the turn is stored
 * and streamed exactly like the owner's own).
 */
@Injectable()
export class AutomationRunsService
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(AutomationRunsService.name);
  private readonly inFlight = new Set<Promise<CronRunView>>();
  private shuttingDown = false;
  /**
   * The runs' records, grouped: the runs a minute starts (100 jobs due at once) go in one insert
   * of up to 100, and their turns begin together. One insert each, which FerretDB runs one after
   * another, kept the last of 100 turns waiting ~0.6 s; ten to an insert, ~0.5 s (stop 46).
   */
  private readonly inserts = new GroupedInserts<AutomationRunRecord>(
    () =>
      driverCollection(
        this.runs.collection as unknown as Collection<AutomationRunRecord>,
      ),
    100,
  );

  constructor(
    @InjectModel(AutomationRunRecord.name)
    private readonly runs: Model<AutomationRunRecord>,
    private readonly replies: ChatReplyService,
    private readonly chats: ChatsService,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly budget: BudgetService,
    private readonly startUp: StartUpWork,
  ) {}

  /** Runs left "running" by a crash or restart would stay so forever: close them. */
  async onApplicationBootstrap(): Promise<void> {
    // Plain indexes no write needs: built beside the server.
    this.startUp.run('create the run indexes', () => this.runs.createIndexes());
    await this.runs
      .updateMany(
        { outcome: 'running' },
        {
          $set: {
            outcome: 'error',
            error: INTERRUPTED,
            finishedAt: this.clock.now(),
          },
        },
      )
      .exec()
      .catch((error: Error) =>
        this.logger.warn(`Could not close interrupted runs: ${error.message}`),
      );
  }

  /** Stops the running turns and stores their runs before the database connection closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await this.replies.stopAll();
    await Promise.all([...this.inFlight]);
  }

  async list(
    kind: AutomationKind,
    jobId: string | null,
    page: RunPage,
  ): Promise<CronRunView[]> {
    const filter: Record<string, unknown> = {
      kind,
      jobId: jobId ? new Types.ObjectId(jobId) : null,
    };
    if (page.before) filter['_id'] = { $lt: new Types.ObjectId(page.before) };
    const runs = await this.runs
      .find(filter)
      .sort({ _id: -1 })
      .limit(page.limit)
      .lean<AutomationRunRecord[]>()
      .exec();
    return runs.map(toRunView);
  }

  /** A run that did not call the model (`skipped` because busy, `missed` while the app was down). */
  async recordWithoutTurn(
    start: RunStart,
    outcome: Extract<RunOutcome, 'skipped' | 'missed'>,
    reason: string,
  ): Promise<CronRunView> {
    const now = this.clock.now();
    const run = await this.insert(start, {
      outcome,
      reason,
      startedAt: now,
      finishedAt: now,
    });
    const view = toRunView(run);
    this.emit(view);
    void this.prune(start.kind, start.jobId);
    return view;
  }

  /** Stores the run as `running` and tells the console; the turn follows with `runTurn`. */
  async begin(start: RunStart, startedAt: Date): Promise<AutomationRunRecord> {
    const run = await this.insert(start, {
      outcome: 'running',
      startedAt,
      finishedAt: null,
    });
    this.emit(toRunView(run));
    return run;
  }

  /**
   * Sends `content` to the run's chat and waits for the reply to end, then
   * stores the outcome. Never rejects: every failure ends up on the run.
   */
  runTurn(
    run: AutomationRunRecord,
    content: string,
    options: ReplyOptions,
    onEnd?: RunListener,
  ): Promise<CronRunView> {
    const turn = this.turn(run, content, options, onEnd);
    this.inFlight.add(turn);
    void turn.finally(() => this.inFlight.delete(turn));
    return turn;
  }

  private async turn(
    run: AutomationRunRecord,
    content: string,
    options: ReplyOptions,
    onEnd?: RunListener,
  ): Promise<CronRunView> {
    let outcome: RunOutcome = 'success';
    let error: string | null = null;
    let reason: string | null = null;
    let messageId: string | null = null;
    let usage: TokenUsage | null = null;
    try {
      if (!run.chatId) throw new Error('The run has no chat to write to.');
      // A run that could not make a single call is not written to its chat at all.
      const refusal = await this.budget.unattendedRefusal();
      if (refusal) throw new BudgetSkip(refusal);
      const prepared = await this.replies.prepare(
        run.chatId.toHexString(),
        content,
        options,
      );
      const reply = await prepared.run();
      usage = reply.usage;
      // Stored with the outcome: one write less per run while a burst of runs starts.
      messageId = reply.messageId;
      if (reply.status === 'stopped') {
        outcome = 'error';
        error =
          this.shuttingDown || this.replies.shuttingDown
            ? INTERRUPTED
            : 'The run was stopped before it finished.';
      } else if (reply.budgetStopped) {
        // Stopped by the budget: `skipped` when no model call went out, else an error that says why.
        outcome = reply.budgetSkipped ? 'skipped' : 'error';
        reason = 'budget';
        error = reply.error;
      } else if (reply.limitStopped) {
        // Stopped at the job's own limit: an error whose reason names the limit.
        outcome = 'error';
        reason = reply.limitStopped === 'rounds' ? 'max-rounds' : 'max-tokens';
        error =
          reply.limitStopped === 'rounds' && options.maxToolRounds
            ? `The run stopped after ${options.maxToolRounds} rounds of tool calls without finishing: the job's limit (maxRounds). Raise it in the job's settings if the job needs more.`
            : reply.error;
      } else if (reply.status === 'error') {
        outcome = 'error';
        error = reply.error;
      }
    } catch (failure) {
      if (failure instanceof BudgetSkip) {
        outcome = 'skipped';
        reason = 'budget';
        error = failure.message;
      } else outcome = 'error';
      if (!(failure instanceof BudgetSkip))
        error =
          failure instanceof HttpException || failure instanceof Error
            ? failure.message
            : String(failure);
    }
    const finishedAt = this.clock.now();
    const fields = {
      outcome,
      error,
      ...(reason ? { reason } : {}),
      finishedAt,
      usage,
      messageId: messageId ? new Types.ObjectId(messageId) : null,
    };
    const view = toRunView({ ...run, ...fields });
    // The owner of the run (job counters, last run) first: once the run reads as ended, everything about it is stored.
    try {
      await onEnd?.(view);
    } catch (failure) {
      this.logger.warn(`A run listener failed: ${(failure as Error).message}`);
    }
    await this.runs
      .updateOne({ _id: run._id }, { $set: fields })
      .exec()
      .catch((failure: Error) =>
        this.logger.error(
          `Could not store the end of a run: ${failure.message}`,
        ),
      );
    this.emit(view);
    void this.prune(run.kind, run.jobId?.toHexString() ?? null);
    return view;
  }

  /**
   * The chat a job or Pulse writes to: `chatId` while it exists, else a new one
   * (the first run, or the owner deleted it); `created` says which.
   */
  async chatFor(
    chatId: Types.ObjectId | null,
    title: string,
    kind: ChatKind,
  ): Promise<{ chatId: string; created: boolean }> {
    if (chatId) {
      try {
        await this.chats.get(chatId.toHexString());
        return { chatId: chatId.toHexString(), created: false };
      } catch {
        // Gone: make a new one.
      }
    }
    return { chatId: (await this.chats.create(title, kind)).id, created: true };
  }

  async removeAll(kind: AutomationKind, jobId: string | null): Promise<void> {
    await this.runs
      .deleteMany({ kind, jobId: jobId ? new Types.ObjectId(jobId) : null })
      .exec();
  }

  private async insert(
    start: RunStart,
    fields: Pick<
      AutomationRunRecord,
      'outcome' | 'startedAt' | 'finishedAt'
    > & { reason?: string },
  ): Promise<AutomationRunRecord> {
    const run: AutomationRunRecord = {
      _id: new Types.ObjectId(),
      kind: start.kind,
      jobId: start.jobId ? new Types.ObjectId(start.jobId) : null,
      trigger: start.trigger,
      dueAt: start.dueAt,
      chatId: start.chatId ? new Types.ObjectId(start.chatId) : null,
      messageId: null,
      reason: fields.reason ?? null,
      error: null,
      usage: null,
      outcome: fields.outcome,
      startedAt: fields.startedAt,
      finishedAt: fields.finishedAt,
    };
    await this.inserts.insert([run]);
    return run;
  }

  private emit(run: CronRunView): void {
    this.events.emit('automation.run', {
      run,
      at: this.clock.now().toISOString(),
    });
  }

  /** Keeps the newest `runHistoryLimit` runs of one job (or of Pulse). */
  private async prune(
    kind: AutomationKind,
    jobId: string | null,
  ): Promise<void> {
    const filter = { kind, jobId: jobId ? new Types.ObjectId(jobId) : null };
    try {
      const boundary = await this.runs
        .find(filter, { _id: 1 })
        .sort({ _id: -1 })
        .skip(this.config.automations.runHistoryLimit)
        .limit(1)
        .lean<{ _id: Types.ObjectId }[]>()
        .exec();
      if (boundary.length)
        await this.runs
          .deleteMany({ ...filter, _id: { $lte: boundary[0]._id } })
          .exec();
    } catch (error) {
      this.logger.warn(`Could not prune old runs: ${(error as Error).message}`);
    }
  }
}
