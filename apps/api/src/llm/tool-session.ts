import type { Logger } from '@nestjs/common';
import type { TaintMark } from '@metatronos/shared-types';
import { ToolTurn } from '../actions/tool-turn';
import type {
  AiToolRegistry,
  ToolCallOutcome,
} from '../ai-tools/ai-tool-registry';
import {
  DEFAULT_MODE,
  toolError,
  type AiTool,
  type AiToolAvailabilityContext,
  type ConversationModeControl,
} from '../ai-tools/ai-tool';
import { modeLabel } from '../ai-tools/modes/mode-names';
import type { CombinedPromptBuilder } from '../system-instruction/combined-prompt.builder';
import type { LlmToolCall, LlmToolSpec } from './llm-adapter';
import type { TurnRequest } from './llm-runner';
import { untilAborted } from './until-aborted';
import { linkAbort } from './abort-link';

/** What a conversation's tool calls need to know: who runs them, in which chat, and how it is gated. */
export interface ToolSessionOptions
  extends Pick<
    TurnRequest,
    | 'source'
    | 'chatId'
    | 'prompt'
    | 'toolFilter'
    | 'mode'
    | 'accountId'
    | 'onModeChange'
  > {
  /** What the action policy needs beyond the source (a typed turn's job, contact, initial taint). */
  policy?: TurnRequest['policy'];
  /** The owner's message of a typed turn (prompt sections such as recalled notes read it). */
  userMessage?: string;
  /** The owner let this reply pass the spend caps: a tool's own model call (an image) may too. */
  allowOverBudget?: boolean;
  availability: AiToolAvailabilityContext;
  /** Names the run for the action policy (its send counter): the assistant message, or the call. */
  runId: string | null;
  /** False when the owner turned memory (and with it every tool) off. */
  toolsAllowed: boolean;
  /** The time limit of a call of a tool that sets none. */
  toolTimeoutMs: number;
  /** The conversation switched mode (set_mode, or a call to another mode's tool). */
  onModeSwitch?(mode: string): void;
}

/** How one call ended. */
export interface ToolRun {
  result: string;
  error: string | null;
  durationMs: number;
  /** The result brought third-party content into the turn. */
  taint?: TaintMark;
  /** The call waits for the owner as this pending action. */
  pendingActionId?: string;
}

/**
 * A conversation's tools as its calls see them: the mode's tool set and the prompt
 * that lists it, the switches made by set_mode / select_account / a call to another
 * mode's tool, and the one path every call runs through (registry, gating,
 * disabled switches, the tool's time limit). A typed turn (the runner) and a
 * voice call both run their calls here, so both follow the same rules.
 */
export class ToolSession {
  private state: { mode: string; accountId: string | null };
  private current: { systemPrompt: string | null; tools: AiTool[] } = {
    systemPrompt: null,
    tools: [],
  };
  /** A call to a tool that was not offered is refused, unless exactly one mode holds it. */
  private offered = new Set<string>();
  /** Tools of the current mode loaded on demand (`<server>_find_tools`); a mode switch drops them. */
  private loaded = new Set<string>();
  private changed = false;
  /** How many taint marks the current prompt names (its third-party section). */
  private promptTaint = 0;
  private readonly conversation: ConversationModeControl | undefined;
  /** The turn as the action policy sees it: taint, sends, the job's consent. */
  readonly turn: ToolTurn;

  private constructor(
    private readonly tools: AiToolRegistry,
    private readonly prompt: CombinedPromptBuilder,
    private readonly logger: Logger,
    private readonly options: ToolSessionOptions,
  ) {
    this.state = {
      mode:
        options.mode && tools.hasMode(options.mode)
          ? options.mode
          : DEFAULT_MODE,
      accountId: options.accountId ?? null,
    };
    this.turn = new ToolTurn({
      ...options.policy,
      source: options.source,
      runId: options.runId,
    });
    const state = this.state;
    this.conversation = options.toolFilter
      ? undefined
      : {
          get mode() {
            return state.mode;
          },
          get accountId() {
            return state.accountId;
          },
          setMode: (mode) => this.switchMode(mode),
          selectAccount: async (accountId) => {
            state.accountId = accountId;
            // The next request's prompt names the newly selected account.
            await this.build();
            this.changed = true;
            await this.storeState('the selected account');
          },
          loadTools: async (names) => {
            const before = this.loaded.size;
            for (const name of names) this.loaded.add(name);
            if (this.loaded.size === before) return;
            await this.build();
            this.changed = true;
          },
        };
  }

  static async open(
    tools: AiToolRegistry,
    prompt: CombinedPromptBuilder,
    logger: Logger,
    options: ToolSessionOptions,
  ): Promise<ToolSession> {
    const session = new ToolSession(tools, prompt, logger, options);
    await session.build();
    return session;
  }

  get mode(): string {
    return this.state.mode;
  }

  get accountId(): string | null {
    return this.state.accountId;
  }

  get systemPrompt(): string | null {
    return this.current.systemPrompt;
  }

  /** The provider specs of the tools offered now (empty when none is). */
  get specs(): LlmToolSpec[] {
    return this.tools.specsOf(this.current.tools);
  }

  /** True once after the mode, the selected account or the turn's taint changed (tools or prompt differ now). */
  takeChange(): boolean {
    const changed = this.changed;
    this.changed = false;
    return changed;
  }

  /**
   * Runs one call under the tool's time limit and answers with a JSON string
   * (never throws). `signal` is the turn's or the call's: its abort abandons the tool.
   */
  async run(
    call: LlmToolCall,
    signal: AbortSignal,
    messageId: string | null,
  ): Promise<ToolRun> {
    const started = performance.now();
    const limit = this.tools.timeoutOf(call.name, this.options.toolTimeoutMs);
    // Released once the call has an outcome: a tool's work ends with its call (an abandoned one
    // has seen the abort already).
    const link = linkAbort([signal], limit);
    const toolSignal = link.signal;
    const context = {
      ...this.options.availability,
      chatId: this.options.chatId,
      messageId,
      conversation: this.conversation,
      turn: this.turn,
      signal: toolSignal,
      ...(this.options.allowOverBudget ? { allowOverBudget: true } : {}),
    };
    // The registry answers every call and never throws, so a rejection here is the abort.
    const outcome = await untilAborted(
      toolSignal,
      () =>
        this.offered.has(call.name)
          ? this.tools.call(call.name, call.arguments, context)
          : this.runElsewhere(call, context),
      () => new Error('abandoned'),
    )
      .catch(() =>
        plain(
          signal.aborted
            ? toolError('The reply was cancelled before this tool finished.')
            : toolError(
                `The tool '${call.name}' did not finish within ${seconds(limit)} and was abandoned.`,
              ),
        ),
      )
      .finally(link.dispose);
    const { result } = outcome;
    if (this.turn.taint.length !== this.promptTaint) {
      // The next request's prompt names what marked the turn, so the model knows why its outward calls wait.
      await this.build();
      this.changed = true;
    }
    return {
      result,
      error: errorOf(result),
      durationMs: Math.round(performance.now() - started),
      ...(outcome.taint ? { taint: outcome.taint } : {}),
      ...(outcome.pendingActionId
        ? { pendingActionId: outcome.pendingActionId }
        : {}),
    };
  }

  /** Runs a call of a tool the current mode does not offer: switches to the one mode that holds it, or refuses. */
  private async runElsewhere(
    call: LlmToolCall,
    context: Parameters<AiToolRegistry['call']>[2],
  ): Promise<ToolCallOutcome> {
    const { name } = call;
    const tool = this.tools.tool(name);
    const holders =
      this.conversation &&
      tool &&
      (await this.tools.isUsable(tool, this.options.availability))
        ? this.tools.modesOf(name)
        : [];
    if (holders.length > 1)
      return plain(
        toolError(
          `The tool '${name}' is not in the current mode '${this.state.mode}'; the modes ${holders.map((m) => `'${m}'`).join(' and ')} hold it: call set_mode with one of them first.`,
        ),
      );
    if (holders.length === 0)
      return plain(
        toolError(`The tool '${name}' is not available in this reply.`),
      );
    await this.switchMode(holders[0]);
    const outcome = await this.tools.call(name, call.arguments, context);
    return {
      ...outcome,
      result: withModeNote(
        outcome.result,
        `Switched to ${modeLabel(holders[0])}, which holds ${name}; its tools are loaded now.`,
      ),
    };
  }

  private async switchMode(mode: string): Promise<void> {
    if (mode === this.state.mode) return;
    this.state.mode = mode;
    this.loaded.clear();
    await this.build();
    this.changed = true;
    this.options.onModeSwitch?.(mode);
    await this.storeState('the mode switch');
  }

  private async storeState(what: string): Promise<void> {
    await this.options
      .onModeChange?.({ ...this.state })
      .catch((error: Error) =>
        this.logger.warn(`Could not store ${what}: ${error.message}`),
      );
  }

  /** The mode's tools plus those loaded on demand that are still usable and of this mode. */
  private async withLoaded(tools: AiTool[]): Promise<AiTool[]> {
    const offered = new Set(tools.map((t) => t.name));
    const extra: AiTool[] = [];
    for (const name of this.loaded) {
      const tool = this.tools.tool(name);
      if (
        tool &&
        !offered.has(name) &&
        tool.modes?.includes(this.state.mode) &&
        (await this.tools.isUsable(tool, this.options.availability))
      )
        extra.push(tool);
    }
    return [...tools, ...extra];
  }

  /** The tools and prompt of the next model request: the mode's tools (or the profile's), and the prompt that lists them. */
  private async build(): Promise<void> {
    const { availability, toolsAllowed, toolFilter: profile } = this.options;
    // Every usable tool, asked once: the mode's come from it, and the prompt lists the others.
    const usable = toolsAllowed ? await this.tools.available(availability) : [];
    const tools = !toolsAllowed
      ? []
      : profile
        ? usable.filter((t) => profile(t.name))
        : await this.withLoaded(
            this.tools.modeSelection(usable, this.state.mode),
          );
    const systemPrompt = await this.prompt.buildCombinedPrompt({
      source: this.options.source,
      ...this.options.prompt,
      toolsAllowed,
      toolFilter: profile,
      mode: profile ? undefined : this.state.mode,
      offeredTools: tools.map((t) => t.name),
      availableTools:
        toolsAllowed &&
        (this.options.prompt?.source ?? this.options.source) ===
          availability.source
          ? usable
          : undefined,
      accountId: profile ? undefined : this.state.accountId,
      userMessage: this.options.userMessage,
      taint: this.turn.taint,
    });
    this.promptTaint = this.turn.taint.length;
    this.current = { systemPrompt, tools };
    this.offered = new Set(tools.map((t) => t.name));
  }
}

/** 300000 → "300 s", 1500 → "1.5 s". */
export function seconds(ms: number): string {
  return `${Number.isInteger(ms / 1000) ? ms / 1000 : (ms / 1000).toFixed(1)} s`;
}

/** A tool's JSON answer with a note that the conversation switched mode to run it. */
function withModeNote(result: string, note: string): string {
  try {
    const parsed: unknown = JSON.parse(result);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return JSON.stringify({ ...parsed, modeSwitch: note });
    return JSON.stringify({ modeSwitch: note, result: parsed });
  } catch {
    return JSON.stringify({ modeSwitch: note, result });
  }
}

function plain(result: string): ToolCallOutcome {
  return { result, taint: null, pendingActionId: null };
}

function errorOf(result: string): string | null {
  if (!result.startsWith('{"error"')) return null;
  try {
    const parsed = JSON.parse(result) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : null;
  } catch {
    return null;
  }
}
