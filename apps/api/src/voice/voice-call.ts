import type { Logger } from '@nestjs/common';
import type {
  AssistantPart,
  ModelProvider,
  TokenUsage,
} from '@metatronos/shared-types';
import { toolError } from '../ai-tools/ai-tool';
import { BudgetRefusal } from '../budget/budget-refusal';
import type { SpendHold } from '../budget/budget.service';
import type { CallMessage, CallTranscripts } from '../chats/call-transcripts';
import type { ChatRecord } from '../chats/schemas/chat.schema';
import type { Clock } from '../clock/clock';
import type { ToolRun, ToolSession } from '../llm/tool-session';
import type { UsageRecorder } from '../usage/usage-recorder';
import type {
  RealtimeControl,
  RealtimeEvent,
  RealtimeProvider,
} from './realtime-provider';
import {
  CONFIRM_ACTION_TOOL,
  SpokenConfirmations,
  withConfirmAction,
  type SpokenApprovals,
} from './spoken-confirmation';

/** The budget as a call uses it: one response's worst case held at a time. */
export interface VoiceCallBudget {
  /**
   * Holds the next response: the session's prompt plus `contextTokens` of the
   * conversation so far; `goodbye`: the short last words, allowed over the caps.
   * Throws a BudgetRefusal when the caps do not allow it.
   */
  holdResponse(contextTokens: number, goodbye: boolean): Promise<SpendHold>;
}

/** The last words' output limit: a sentence or two. */
export const GOODBYE_OUTPUT_TOKENS = 300;
/** The goodbye is spoken within this, or the call is hung up anyway. */
const GOODBYE_MAX_MS = 20_000;
/** Audio output runs about 20 tokens a second: the goodbye is played out before the hang-up. */
const AUDIO_MS_PER_OUTPUT_TOKEN = 50;

export interface VoiceCallDeps {
  /** Only the hang-up is the call's to make (a relayed provider closes its session there). */
  provider: Pick<RealtimeProvider, 'hangup'>;
  budget: VoiceCallBudget;
  transcripts: CallTranscripts;
  usage: UsageRecorder;
  clock: Clock;
  logger: Logger;
  /** The pending actions a spoken yes approves (confirm_action). */
  actions: SpokenApprovals;
}

export interface VoiceCallInfo {
  callId: string;
  chat: ChatRecord;
  /** The speaking model, as usage names it. */
  model: string;
  tools: ToolSession;
  maxCallMs: number;
  silenceMs: number;
  /** The first response's hold, taken before the call was created. */
  hold: SpendHold;
  /** Whose tokens the usage records name; absent: OpenAI. */
  usageProvider?: ModelProvider;
  /** How fast Metatron speaks in a mode (its `speechSpeed`); omitted: the provider's default. */
  speedOf?(mode: string): number;
}

/** How a tool call of the call is shown in the chat while it runs. */
type ToolPart = Extract<AssistantPart, { type: 'tool_call' }>;

/**
 * One live call: runs the function calls the provider announces (each once,
 * through the conversation's ToolSession), answers them on the control channel,
 * keeps the owner's and Metatron's words as messages of the chat in the order
 * spoken, records each response's usage once, and ends itself on a limit.
 */
export class VoiceCall {
  readonly callId: string;
  readonly chat: ChatRecord;
  readonly startedAt: Date;
  private control: RealtimeControl | null = null;
  private readonly abort = new AbortController();
  /** Function calls seen (any of their announcements): each runs once. */
  private readonly seenCalls = new Set<string>();
  private readonly countedResponses = new Set<string>();
  /** The owner's words, by the provider's item id: their place is taken when speech starts. */
  private readonly ownerMessages = new Map<string, CallMessage>();
  /** Metatron's answer to the owner's last words: tool calls, switches and speech in one message. */
  private assistant: CallMessage | null = null;
  private running = 0;
  private outputsWaiting = 0;
  private responseOpen = false;
  private writes: Promise<void> = Promise.resolve();
  private usageWrites: Promise<void> = Promise.resolve();
  private limitTimer: NodeJS.Timeout | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private ended: Promise<void> | null = null;
  /** The response under way's (or the next one's) hold on the budget. */
  private hold: SpendHold | null;
  /** Budget steps in the order of the events: a settle never passes the hold it settles. */
  private budgetSteps: Promise<void> = Promise.resolve();
  /** What the next response reads again: the conversation's tokens so far. */
  private contextTokens = 0;
  /** The budget ended the call: the goodbye asked for, and the response that says it. */
  private closing: {
    reason: string;
    goodbyeStarted: boolean;
    goodbyeId: string | null;
    timer: NodeJS.Timeout;
  } | null = null;
  /** The owner's utterances and the actions they may approve by voice. */
  private readonly confirmations: SpokenConfirmations;
  /** Called once when the call ends, with why. */
  onEnded: ((reason: string) => void) | null = null;

  constructor(
    private readonly deps: VoiceCallDeps,
    private readonly info: VoiceCallInfo,
  ) {
    this.callId = info.callId;
    this.chat = info.chat;
    this.startedAt = deps.clock.now();
    this.hold = info.hold;
    this.confirmations = new SpokenConfirmations(deps.actions, {
      chatId: info.chat._id.toHexString(),
      tainted: () => info.tools.turn.tainted,
    });
  }

  get isEnded(): boolean {
    return this.ended !== null;
  }

  /** Attaches the control channel and starts the call's clocks. */
  attach(control: RealtimeControl): void {
    this.control = control;
    this.limitTimer = setTimeout(
      () => void this.end('the call reached its time limit'),
      this.info.maxCallMs,
    );
    this.heard();
  }

  /** A mode switch made by a tool: kept as a part of the answer that made it. */
  modeSwitched(mode: string): void {
    this.answer().parts.push({ type: 'mode', mode, by: 'model' });
    this.save(this.answer());
  }

  /** Handles one provider event; never throws (a bad event is logged and ignored). */
  handle(event: RealtimeEvent): void {
    if (this.ended) return;
    try {
      switch (event.type) {
        case 'speech-started':
          this.heard();
          // The owner speaks again: what Metatron says next is a new message, after these words.
          this.assistant = null;
          this.confirmations.speechStarted(event.itemId);
          if (event.itemId && !this.ownerMessages.has(event.itemId))
            this.ownerMessages.set(event.itemId, this.message('user'));
          return;
        case 'owner-transcript': {
          this.heard();
          const text = event.text.trim();
          if (!text) return;
          const message =
            (event.itemId && this.ownerMessages.get(event.itemId)) ||
            this.message('user');
          if (event.itemId) this.ownerMessages.delete(event.itemId);
          this.confirmations.ownerWords(event.itemId, text);
          message.text = text;
          this.save(message);
          return;
        }
        case 'response-started':
          this.responseOpen = true;
          if (this.closing && !this.closing.goodbyeStarted) {
            this.closing.goodbyeStarted = true;
            this.closing.goodbyeId = event.responseId;
          }
          this.budgetStep(() => this.ensureHold());
          return;
        case 'assistant-transcript': {
          this.heard();
          const text = event.text.trim();
          if (!text) return;
          const answer = this.answer();
          const last = answer.parts[answer.parts.length - 1];
          if (last?.type === 'text') last.text += ` ${text}`;
          else answer.parts.push({ type: 'text', text });
          this.save(answer);
          return;
        }
        case 'function-call':
          // A call being ended by the budget runs no more tools.
          if (this.closing || this.seenCalls.has(event.callId)) return;
          this.seenCalls.add(event.callId);
          void this.runCall(event);
          return;
        case 'response-done': {
          this.responseOpen = false;
          const counted = this.countUsage(event.responseId, event.usage);
          if (counted !== false)
            this.budgetStep(() => this.settleResponse(counted));
          this.goodbyeSaid(event);
          this.respondIfReady();
          return;
        }
        case 'provider-error':
          this.deps.logger.warn(
            `The realtime provider reported an error in call ${this.callId}: ${event.message}`,
          );
          return;
      }
    } catch (error) {
      this.deps.logger.warn(
        `Ignored a realtime event of call ${this.callId}: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Ends the call once (hang-up at the provider, control channel closed) and
   * resolves when its words are stored.
   */
  end(reason: string): Promise<void> {
    this.ended ??= (async () => {
      this.deps.logger.log(`Voice call ${this.callId} ended: ${reason}`);
      this.abort.abort();
      if (this.closing) clearTimeout(this.closing.timer);
      // A response cut off by the hang-up may be billed: its worst case stays counted.
      const open = this.responseOpen;
      this.budgetStep(async () => {
        const hold = this.hold;
        this.hold = null;
        if (hold) await (open ? hold.settle(null) : hold.release());
      });
      if (this.limitTimer) clearTimeout(this.limitTimer);
      if (this.silenceTimer) clearTimeout(this.silenceTimer);
      this.control?.close();
      this.onEnded?.(reason);
      await this.deps.provider.hangup(this.callId);
      await Promise.all([this.writes, this.usageWrites, this.budgetSteps]);
    })();
    return this.ended;
  }

  private async runCall(
    event: Extract<RealtimeEvent, { type: 'function-call' }>,
  ): Promise<void> {
    this.running++;
    const answer = this.answer();
    const args = parseArguments(event.arguments);
    const part: ToolPart = {
      type: 'tool_call',
      id: event.callId,
      name: event.name,
      arguments: args ?? {},
      result: null,
      error: null,
      durationMs: null,
    };
    answer.parts.push(part);
    try {
      const run = !args
        ? null
        : event.name === CONFIRM_ACTION_TOOL
          ? await this.confirmByVoice(args)
          : await this.info.tools.run(
              { id: event.callId, name: event.name, arguments: args },
              this.abort.signal,
              answer.id.toHexString(),
            );
      const outcome = run ?? {
        result: toolError(
          'The arguments were not a JSON object; call the tool again with valid arguments.',
        ),
        error: 'The arguments were not a JSON object.',
        durationMs: 0,
      };
      if (outcome.pendingActionId) {
        this.confirmations.actionHeld(outcome.pendingActionId);
        outcome.result = this.confirmations.pendingNote(outcome.result);
      }
      Object.assign(part, outcome);
      if (this.ended) return;
      this.control?.sendToolOutput(event.callId, outcome.result);
      this.outputsWaiting++;
    } finally {
      this.running--;
      this.save(answer);
      this.respondIfReady();
    }
  }

  /**
   * Asks for the model's next response once every call it made is answered and
   * its response is over; a switched mode's tools and prompt go first.
   */
  private respondIfReady(): void {
    if (
      this.ended ||
      this.closing ||
      !this.control ||
      this.running > 0 ||
      this.responseOpen ||
      this.outputsWaiting === 0
    )
      return;
    this.outputsWaiting = 0;
    const { tools } = this.info;
    if (tools.takeChange())
      this.control.updateSession({
        instructions: tools.systemPrompt ?? '',
        tools: withConfirmAction(tools.specs),
        speed: this.info.speedOf?.(tools.mode),
      });
    this.control.createResponse();
  }

  /** confirm_action: approves a pending action of this call on the owner's spoken yes. */
  private async confirmByVoice(
    args: Record<string, unknown>,
  ): Promise<ToolRun> {
    const started = performance.now();
    const result = await this.confirmations.confirm(args, this.abort.signal);
    return {
      result,
      error: toolErrorText(result),
      durationMs: Math.round(performance.now() - started),
    };
  }

  /** The usage to settle the response's hold with (null: none reported), or false for a response counted already. */
  private countUsage(
    responseId: string | null,
    usage: TokenUsage | null,
  ): TokenUsage | null | false {
    if (responseId && this.countedResponses.has(responseId)) return false;
    if (!usage) return null;
    if (responseId) this.countedResponses.add(responseId);
    const answer = this.assistant;
    if (answer) {
      answer.usage = {
        inputTokens:
          (answer.usage?.inputTokens ?? 0) + (usage.inputTokens ?? 0),
        outputTokens:
          (answer.usage?.outputTokens ?? 0) + (usage.outputTokens ?? 0),
        totalTokens:
          (answer.usage?.totalTokens ?? 0) + (usage.totalTokens ?? 0),
      };
      if (answer.parts.length) this.save(answer);
    }
    // One at a time: FerretDB's $inc is a read-modify-write, and two at once lose one.
    this.usageWrites = this.usageWrites.then(() =>
      this.deps.usage.record({
        source: 'voice',
        model: this.info.model,
        provider: this.info.usageProvider ?? 'openai',
        usage,
      }),
    );
    return usage;
  }

  /** Runs a budget step after the ones before it; a failure is logged, never thrown. */
  private budgetStep(step: () => Promise<void>): void {
    this.budgetSteps = this.budgetSteps
      .then(step)
      .catch((error: Error) =>
        this.deps.logger.warn(
          `Budget step of call ${this.callId} failed: ${error.message}`,
        ),
      );
  }

  /** A response is under way: it has a hold, taken now if the last one was settled. */
  private async ensureHold(): Promise<void> {
    if (this.hold || this.ended) return;
    try {
      const hold = await this.deps.budget.holdResponse(
        this.contextTokens,
        this.closing !== null,
      );
      if (this.ended) await hold.release();
      else this.hold = hold;
    } catch (error) {
      if (!(error instanceof BudgetRefusal)) throw error;
      this.sayGoodbye(error.message);
    }
  }

  /**
   * Settles the response's hold to what it reported, then holds the next one now:
   * when the caps would not allow it, the call says goodbye while it still can.
   */
  private async settleResponse(usage: TokenUsage | null): Promise<void> {
    const hold = this.hold;
    this.hold = null;
    if (usage)
      this.contextTokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
    if (hold) await hold.settle(usage);
    if (!this.closing && !this.ended) await this.ensureHold();
  }

  /**
   * Ends the call politely: the response under way is cancelled, the notice is
   * kept in the chat, the model says it in a few words, and the call is hung up
   * once that is spoken (or after GOODBYE_MAX_MS).
   */
  private sayGoodbye(notice: string): void {
    if (this.closing || this.ended || !this.control) return;
    const reason = 'the budget does not allow more';
    this.closing = {
      reason,
      goodbyeStarted: false,
      goodbyeId: null,
      timer: setTimeout(() => void this.end(reason), GOODBYE_MAX_MS),
    };
    if (this.responseOpen) this.control.cancelResponse();
    const answer = this.answer();
    answer.parts.push({ type: 'text', text: `(${notice} The call ended.)` });
    this.save(answer);
    this.assistant = null;
    this.control.createResponse({
      instructions: `Say this to the owner in one or two short sentences, in the language of the conversation, then stop: the spending budget is used up (${notice}), so the call ends now. Say goodbye. Do not call any tool.`,
      maxOutputTokens: GOODBYE_OUTPUT_TOKENS,
    });
  }

  /** The goodbye was generated: hang up once it has been played. */
  private goodbyeSaid(
    event: Extract<RealtimeEvent, { type: 'response-done' }>,
  ): void {
    const closing = this.closing;
    if (!closing?.goodbyeStarted) return;
    if (closing.goodbyeId && event.responseId !== closing.goodbyeId) return;
    clearTimeout(closing.timer);
    const playMs = Math.min(
      GOODBYE_MAX_MS,
      500 + (event.usage?.audioOutputTokens ?? 0) * AUDIO_MS_PER_OUTPUT_TOKEN,
    );
    closing.timer = setTimeout(() => void this.end(closing.reason), playMs);
  }

  private answer(): CallMessage {
    this.assistant ??= this.message('assistant');
    return this.assistant;
  }

  private message(role: CallMessage['role']): CallMessage {
    return {
      id: this.deps.transcripts.nextId(),
      role,
      parts: [],
      model: role === 'assistant' ? this.info.model : null,
      usage: null,
      createdAt: this.deps.clock.now(),
    };
  }

  /** Queues a write of the message as it stands; writes run one after the other. */
  private save(message: CallMessage): void {
    const snapshot: CallMessage = {
      ...message,
      parts: message.parts.map((p) => ({ ...p })),
    };
    this.writes = this.writes
      .then(() => this.deps.transcripts.write(this.chat, snapshot))
      .catch((error: Error) =>
        this.deps.logger.warn(
          `Could not store words of call ${this.callId}: ${error.message}`,
        ),
      );
  }

  /** Someone spoke: the silence limit starts again. */
  private heard(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(
      () => void this.end('nobody spoke for too long'),
      this.info.silenceMs,
    );
  }
}

function toolErrorText(result: string): string | null {
  try {
    const parsed = JSON.parse(result) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : null;
  } catch {
    return null;
  }
}

function parseArguments(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text || '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
