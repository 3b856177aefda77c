import type { Logger } from '@nestjs/common';
import type { Types } from 'mongoose';
import type {
  AssistantPart,
  TaintMark,
  ChatStreamEventMap,
  ChatStreamEventName,
  TokenUsage,
} from '@metatronos/shared-types';
import type { Clock } from '../clock/clock';
import type { TurnError } from '../llm/llm-errors';
import type { TurnListener } from '../llm/llm-runner';
import type { ChatCache } from './chat-cache';
import type { MessageWrites } from './message-writes';
import { encodeParts } from './stored-parts';
import type { MessageRecord } from './schemas/message.schema';

/** Receives the reply's events; the SSE controller writes them, others may pass none. */
export type ReplyEventSink = <K extends ChatStreamEventName>(
  event: K,
  data: ChatStreamEventMap[K],
) => void;

/** How a reply ended, as stored. */
export interface FinishedReply {
  /** The assistant message; null when none is kept (the turn's messages or its end could not be stored). */
  messageId: string | null;
  status: 'complete' | 'stopped' | 'error';
  /** The reply's text (every text part, in order). */
  text: string;
  parts: AssistantPart[];
  usage: TokenUsage | null;
  /** Why it failed (`status: 'error'`), as the owner reads it. */
  error: string | null;
  /** A spend cap, the 402 pause or an unpriced model stopped the turn; `budgetSkipped`: before any model call went out. */
  budgetStopped?: boolean;
  budgetSkipped?: boolean;
  /** The turn's own limit stopped it: `rounds` (tool rounds), `tokens` (tokens per run). */
  limitStopped?: 'rounds' | 'tokens';
}

/**
 * How far the stored reply may lag behind what the listener saw while the turn runs: every change
 * (text, a tool call or its result, a mode switch, new taint marks) is written at most this long
 * after it came. A quick tool round (a lookup and the model's next call) costs no write of its own
 * then: what changed within the interval goes out in one write, or with the end of the turn.
 */
export const FLUSH_INTERVAL_MS = 250;

/**
 * The record of one assistant message while its turn runs: collects the
 * parts the model sends (text, tool calls and their results), writes the
 * growing message now and then, tells the listener, and stores how the turn
 * ended. A failed reply is kept with `status: "error"` and its error text,
 * whatever part of it arrived (none at all included), so the owner can retry it.
 */
export class TurnRecording {
  readonly messageId: string;
  private readonly parts: AssistantPart[] = [];
  /** What brought third-party content into the turn, stored on the reply. */
  private taint: TaintMark[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly writes: Pick<MessageWrites, 'set'>,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly assistant: MessageRecord,
    private readonly sink: ReplyEventSink | undefined,
    /** The insert of the turn's messages, which may still be under way: true once they are stored. */
    private readonly stored: Promise<boolean> = Promise.resolve(true),
  ) {
    this.messageId = (assistant._id as Types.ObjectId).toHexString();
    this.taint = (assistant.taint ?? []).map((m) => ({ ...m }));
    this.writing = stored;
  }

  /** Tells the listener; a listener that throws never breaks the reply. */
  readonly emit: ReplyEventSink = (event, data) => {
    if (!this.sink) return;
    try {
      this.sink(event, data);
    } catch (error) {
      this.logger.warn(`A reply listener failed: ${(error as Error).message}`);
    }
  };

  /** What the runner calls while the turn runs. */
  readonly listener: TurnListener = {
    text: (delta) => {
      const last = this.parts[this.parts.length - 1];
      if (last?.type === 'text') last.text += delta;
      else this.parts.push({ type: 'text', text: delta });
      this.emit('delta', { text: delta });
      this.changed();
    },
    toolCall: (call) => {
      this.parts.push({
        type: 'tool_call',
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result: null,
        error: null,
        durationMs: null,
      });
      this.emit('tool_call', {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      });
      this.changed();
    },
    modeSwitch: (mode) => {
      this.parts.push({ type: 'mode', mode, by: 'model' });
      this.emit('mode', { mode, by: 'model' });
      this.changed();
    },
    toolResult: (record) => {
      const part = this.parts.find(
        (p) =>
          p.type === 'tool_call' && p.id === record.id && p.result === null,
      );
      const marks = {
        ...(record.taint ? { taint: record.taint } : {}),
        ...(record.pendingActionId
          ? { pendingActionId: record.pendingActionId }
          : {}),
      };
      if (part)
        Object.assign(part, {
          result: record.result,
          error: record.error,
          durationMs: record.durationMs,
          ...marks,
        });
      this.emit('tool_result', {
        id: record.id,
        name: record.name,
        result: record.result ?? '',
        durationMs: record.durationMs ?? 0,
        error: record.error,
        ...marks,
      });
      this.changed();
    },
    taint: (marks) => {
      // The marks the message was inserted with (a contact's turn starts tainted): nothing new to write.
      if (sameMarks(marks, this.taint)) return;
      this.taint = marks.map((m) => ({ ...m }));
      this.changed();
    },
  };

  /**
   * Stores the end of the turn (after the writes still under way) and tells
   * the listener: `done`, or `error`. Never rejects.
   */
  async finish(
    failure: TurnError | null,
    usage: TokenUsage | undefined,
  ): Promise<FinishedReply> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.writing;
    const final = this.snapshot();
    const reply = (
      messageId: string | null,
      status: FinishedReply['status'],
      error: string | null = null,
    ): FinishedReply => ({
      messageId,
      status,
      text: final.content,
      parts: this.parts.map((p) => ({ ...p })),
      usage: status === 'complete' ? (usage ?? null) : null,
      error,
    });
    const { messageId } = this;
    try {
      if (!failure) {
        await this.store({
          ...final,
          status: 'complete',
          usage: usage ?? null,
        });
        this.emit('done', usage ? { messageId, usage } : { messageId });
        return reply(messageId, 'complete');
      }
      if (failure.kind === 'stopped') {
        await this.store({ ...final, status: 'stopped' });
        this.emit('done', { messageId, stopped: true });
        return reply(messageId, 'stopped');
      }
      // Kept even when nothing arrived, so the failure survives a reload and can be retried (the history skips it).
      await this.store({ ...final, status: 'error', error: failure.message });
      const budget = failure.kind === 'budget';
      this.emit('error', {
        message: failure.message,
        messageId,
        ...(budget ? { overBudget: true } : {}),
      });
      return {
        ...reply(messageId, 'error', failure.message),
        ...(budget
          ? { budgetStopped: true, budgetSkipped: !failure.providerCalled }
          : {}),
        ...(failure.kind === 'tool-cap'
          ? { limitStopped: 'rounds' as const }
          : failure.kind === 'run-tokens'
            ? { limitStopped: 'tokens' as const }
            : {}),
      };
    } catch (error) {
      this.logger.error(
        `Could not store the end of a reply: ${(error as Error).message}`,
      );
      const message =
        'The reply could not be saved: the database is unavailable.';
      this.emit('error', { message, messageId: null });
      return reply(null, 'error', message);
    }
  }

  /**
   * Ends a turn whose messages could not be stored: nothing is written, the
   * listener gets `error` with `message` and no message id. Never rejects.
   */
  async abandon(message: string): Promise<FinishedReply> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.writing;
    this.emit('error', { message, messageId: null, unsaved: true });
    return {
      messageId: null,
      status: 'error',
      text: this.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''),
      parts: this.parts.map((p) => ({ ...p })),
      usage: null,
      error: message,
    };
  }

  private snapshot() {
    return {
      ...(this.taint.length ? { taint: this.taint } : {}),
      parts: encodeParts(this.parts),
      content: this.parts
        .map((p) => (p.type === 'text' ? p.text : ''))
        .join(''),
      updatedAt: this.clock.now(),
    };
  }

  /** Something changed: written with whatever else changes within FLUSH_INTERVAL_MS (a crash loses at most that). */
  private changed(): void {
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Queues a write of the message as it stands; writes run one after the other. */
  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const state = this.snapshot();
    this.writing = this.writing
      .then(async () => {
        if (!(await this.stored)) return;
        await this.write(state);
      })
      .catch((error: Error) => {
        this.logger.warn(`Could not store the growing reply: ${error.message}`);
      });
  }

  /**
   * Sets fields of the assistant message through the driver (every field written here is `Mixed`
   * or a plain string or date, which mongoose would not cast), grouped with other turns' writes.
   */
  private async write(fields: Partial<MessageRecord>): Promise<void> {
    await this.writes.set(this.messageId, { _id: this.assistant._id }, fields);
  }

  private async store(fields: Partial<MessageRecord>): Promise<void> {
    await this.write(fields);
    this.cache.append(this.assistant.chatId, {
      ...this.assistant,
      ...fields,
    });
  }
}

function sameMarks(a: readonly TaintMark[], b: readonly TaintMark[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (m, i) => m.by === b[i].by && m.text === b[i].text && m.at === b[i].at,
    )
  );
}
