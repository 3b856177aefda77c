import type { Logger } from '@nestjs/common';
import type { AssistantPart, TokenUsage } from '@metatronos/shared-types';
import { toolError } from '../ai-tools/ai-tool';
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

export interface VoiceCallDeps {
  provider: RealtimeProvider;
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
          if (this.seenCalls.has(event.callId)) return;
          this.seenCalls.add(event.callId);
          void this.runCall(event);
          return;
        case 'response-done':
          this.responseOpen = false;
          this.countUsage(event.responseId, event.usage);
          this.respondIfReady();
          return;
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
      if (this.limitTimer) clearTimeout(this.limitTimer);
      if (this.silenceTimer) clearTimeout(this.silenceTimer);
      this.control?.close();
      this.onEnded?.(reason);
      await this.deps.provider.hangup(this.callId);
      await Promise.all([this.writes, this.usageWrites]);
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

  private countUsage(responseId: string | null, usage: TokenUsage | null) {
    if (!usage || (responseId && this.countedResponses.has(responseId))) return;
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
        provider: 'openai',
        usage,
      }),
    );
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
