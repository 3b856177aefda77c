import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectConnection, InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, type Connection, type Model } from 'mongoose';
import {
  PENDING_ACTION_TTL_MS,
  type ActionStatus,
  type ActionsQuery,
  type AppEventMap,
  type ApproveActionResponse,
  type PendingActionView,
} from '@metatronos/shared-types';
import {
  AiToolRegistry,
  isToolError,
  type HeldCall,
  type PendingActionGate,
} from '../ai-tools/ai-tool-registry';
import type { ConversationModeControl } from '../ai-tools/ai-tool';
import { parseToolArguments } from '../ai-tools/tool-argument-schema';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { SettingsService } from '../settings/settings.service';
import { ToolTurn } from './tool-turn';
import {
  PENDING_ACTION_CLAIMS_COLLECTION,
  PendingActionRecord,
} from './schemas/pending-action.schema';

export const ACTION_NOT_FOUND = 'Pending action not found';
export const DEFAULT_ACTIONS_LIMIT = 100;
/** How often actions past their 24 h are marked expired, so every console's badge and list drop them without a reload. */
export const EXPIRY_SWEEP_MS = 60_000;
export const MAX_ACTIONS_LIMIT = 500;

/** Why an action that is no longer pending cannot be approved, edited or discarded. */
const NOT_PENDING: Record<Exclude<ActionStatus, 'pending'>, string> = {
  running: 'This action is being approved right now',
  done: 'This action was already approved and ran',
  failed: 'This action was already approved (it failed)',
  discarded: 'This action was discarded',
  expired: 'This action expired (pending actions expire after 24 hours)',
};

/**
 * Pending actions: tool calls the action policy held for the owner. The registry hands
 * them here (`hold`); the owner approves (the stored call runs once, through the same
 * registry, never the model again), edits or discards them.
 */
@Injectable()
export class PendingActionsService
  implements
    PendingActionGate,
    OnModuleInit,
    OnApplicationBootstrap,
    OnModuleDestroy
{
  private readonly logger = new Logger(PendingActionsService.name);
  /** Approvals under way in this process: the quick answer to a double click. */
  private readonly approving = new Set<string>();
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    @InjectModel(PendingActionRecord.name)
    private readonly actions: Model<PendingActionRecord>,
    @InjectConnection() private readonly connection: Connection,
    private readonly registry: AiToolRegistry,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  onModuleInit(): void {
    this.registry.useGate(this);
  }

  onModuleDestroy(): void {
    if (this.sweep) clearInterval(this.sweep);
    this.sweep = null;
  }

  /** An approval cut short by a stop cannot be told apart from one that ran: it is marked failed, never run again. */
  async onApplicationBootstrap(): Promise<void> {
    await this.expireOverdue().catch((error: Error) =>
      this.logger.warn(`Could not expire old actions: ${error.message}`),
    );
    this.sweep = setInterval(() => {
      this.expireOverdue().catch((error: Error) =>
        this.logger.warn(`Could not expire old actions: ${error.message}`),
      );
    }, EXPIRY_SWEEP_MS);
    this.sweep.unref();
    const now = this.clock.now();
    await this.actions
      .updateMany(
        { status: 'running' },
        {
          $set: {
            status: 'failed',
            error:
              'The server stopped while this action ran: check whether it happened before doing it again.',
            updatedAt: now,
          },
        },
      )
      .exec()
      .catch((error: Error) =>
        this.logger.warn(
          `Could not close interrupted actions: ${error.message}`,
        ),
      );
  }

  private changed(
    id: string,
    change: AppEventMap['actions.changed']['change'],
    chatId: string | null,
  ): void {
    this.events.emit('actions.changed', {
      id,
      change,
      chatId,
      at: this.clock.now().toISOString(),
    });
  }

  async hold(call: HeldCall): Promise<{ id: string }> {
    const now = this.clock.now();
    const created = await this.actions.create({
      tool: call.tool,
      summary: call.summary,
      argumentsJson: JSON.stringify(call.arguments),
      chatId: call.context.chatId,
      messageId: call.context.messageId,
      jobId: call.turn.jobId,
      accountId: call.context.conversation?.accountId ?? null,
      source: call.turn.source,
      taint: [...call.turn.taint],
      reason: call.reason,
      effect: call.effect,
      status: 'pending',
      resultJson: null,
      error: null,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + PENDING_ACTION_TTL_MS),
    });
    const id = created._id.toHexString();
    this.changed(id, 'created', call.context.chatId);
    return { id };
  }

  /** Newest first. */
  async list(query: ActionsQuery): Promise<PendingActionView[]> {
    await this.expireOverdue();
    const filter: Record<string, unknown> = {};
    if (query.status) filter['status'] = query.status;
    if (query.chatId) filter['chatId'] = query.chatId;
    const records = await this.actions
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .limit(Math.min(query.limit ?? DEFAULT_ACTIONS_LIMIT, MAX_ACTIONS_LIMIT))
      .lean<PendingActionRecord[]>()
      .exec();
    return records.map(toView);
  }

  async get(id: string): Promise<PendingActionView> {
    return toView(await this.find(id));
  }

  /** The owner's edit: checked by the tool's own schema, the summary said again. */
  async edit(
    id: string,
    args: Record<string, unknown>,
  ): Promise<PendingActionView> {
    const record = await this.pending(id);
    if (this.approving.has(id))
      throw new ConflictException(NOT_PENDING.running);
    const tool = this.registry.tool(record.tool);
    if (!tool)
      throw new ConflictException(
        `The tool '${record.tool}' is no longer available`,
      );
    const checked = parseToolArguments(tool.schema, args);
    if (!checked.ok) throw new BadRequestException(checked.error);
    const summary =
      tool.summarize?.(checked.args as never)?.trim() ||
      `${tool.name} ${JSON.stringify(checked.args)}`;
    const now = this.clock.now();
    await this.actions
      .updateOne(
        { _id: record._id, status: 'pending' },
        {
          $set: {
            argumentsJson: JSON.stringify(checked.args),
            summary,
            updatedAt: now,
          },
        },
      )
      .exec();
    this.changed(id, 'updated', record.chatId);
    return this.get(id);
  }

  async discard(id: string): Promise<PendingActionView> {
    const record = await this.pending(id);
    if (this.approving.has(id))
      throw new ConflictException(NOT_PENDING.running);
    await this.actions
      .updateOne(
        { _id: record._id, status: 'pending' },
        { $set: { status: 'discarded', updatedAt: this.clock.now() } },
      )
      .exec();
    this.changed(id, 'discarded', record.chatId);
    return this.get(id);
  }

  /**
   * Runs exactly the stored call once, through the registry, as the owner's approved
   * call (the policy does not hold it again). Two approves at once: one runs, the other
   * gets 409 (an in-process lock, then a unique insert that holds across processes).
   */
  async approve(id: string): Promise<ApproveActionResponse> {
    const record = await this.pending(id);
    if (this.approving.has(id))
      throw new ConflictException(NOT_PENDING.running);
    this.approving.add(id);
    try {
      try {
        await this.connection
          .collection(PENDING_ACTION_CLAIMS_COLLECTION)
          .insertOne({ _id: id as never, at: this.clock.now() });
      } catch {
        throw new ConflictException(NOT_PENDING.running);
      }
      await this.actions
        .updateOne(
          { _id: record._id },
          { $set: { status: 'running', updatedAt: this.clock.now() } },
        )
        .exec();
      const answer = await this.run(record);
      await this.actions
        .updateOne(
          { _id: record._id },
          {
            $set: {
              status: answer.status,
              resultJson: JSON.stringify(answer.result ?? null),
              error: answer.error ?? null,
              updatedAt: this.clock.now(),
            },
          },
        )
        .exec();
      this.changed(id, answer.status, record.chatId);
      return answer;
    } finally {
      this.approving.delete(id);
    }
  }

  private async run(
    record: PendingActionRecord,
  ): Promise<ApproveActionResponse> {
    const settings = await this.settings.get();
    const accountId = record.accountId;
    // The account the turn had selected; approve does not switch modes.
    const conversation: ConversationModeControl | undefined = accountId
      ? {
          mode: 'default',
          accountId,
          setMode: async () => undefined,
          selectAccount: async () => undefined,
        }
      : undefined;
    const tool = this.registry.tool(record.tool);
    const limit = tool?.timeoutMs ?? 120_000;
    const outcome = await this.registry.call(
      record.tool,
      JSON.parse(record.argumentsJson),
      {
        source: record.source === 'voice' ? 'chat' : record.source,
        settings,
        chatId: record.chatId,
        messageId: record.messageId,
        conversation,
        signal: AbortSignal.timeout(limit),
        turn: new ToolTurn({ source: record.source, runId: null }),
        ownerApproved: true,
      },
    );
    const result = parseResult(outcome.result);
    if (isToolError(outcome.result)) {
      const error = (result as { error: string }).error;
      return { status: 'failed', result, error };
    }
    return { status: 'done', result };
  }

  private async find(id: string): Promise<PendingActionRecord> {
    const record = isValidObjectId(id)
      ? await this.actions.findById(id).lean<PendingActionRecord>().exec()
      : null;
    if (!record) throw new NotFoundException(ACTION_NOT_FOUND);
    if (record.status === 'pending' && this.overdue(record)) {
      await this.expire(record);
      return { ...record, status: 'expired' };
    }
    return record;
  }

  /** The action, or 409 with why it cannot change any more. */
  private async pending(id: string): Promise<PendingActionRecord> {
    const record = await this.find(id);
    if (record.status !== 'pending')
      throw new ConflictException(NOT_PENDING[record.status]);
    return record;
  }

  private overdue(record: PendingActionRecord): boolean {
    return record.expiresAt.getTime() <= this.clock.now().getTime();
  }

  private async expire(record: PendingActionRecord): Promise<void> {
    await this.actions
      .updateOne(
        { _id: record._id, status: 'pending' },
        { $set: { status: 'expired', updatedAt: this.clock.now() } },
      )
      .exec();
    this.changed(record._id.toHexString(), 'expired', record.chatId);
  }

  /** Pending actions past their 24 h become `expired` (at start, every minute, and whenever one is read). */
  private async expireOverdue(): Promise<void> {
    const overdue = await this.actions
      .find({ status: 'pending', expiresAt: { $lte: this.clock.now() } })
      .lean<PendingActionRecord[]>()
      .exec();
    for (const record of overdue) await this.expire(record);
  }
}

function parseResult(result: string): unknown {
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

function parseArguments(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function toView(record: PendingActionRecord): PendingActionView {
  return {
    id: record._id.toHexString(),
    tool: record.tool,
    summary: record.summary,
    arguments: parseArguments(record.argumentsJson),
    chatId: record.chatId ?? null,
    messageId: record.messageId ?? null,
    jobId: record.jobId ?? null,
    source: record.source,
    tainted: (record.taint ?? []).length > 0,
    taint: (record.taint ?? []).map((m) => ({ ...m })),
    reason: { ...record.reason },
    effect: record.effect,
    status: record.status,
    result: record.resultJson ? parseResult(record.resultJson) : null,
    error: record.error ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    expiresAt: record.expiresAt.toISOString(),
  };
}
