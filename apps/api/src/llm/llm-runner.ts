import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  TaintMark,
  TokenUsage,
  ToolCallRecord,
} from '@metatronos/shared-types';
import { ToolTurn, type ToolTurnStart } from '../actions/tool-turn';
import {
  AiToolRegistry,
  type ToolCallOutcome,
} from '../ai-tools/ai-tool-registry';
import {
  DEFAULT_MODE,
  toolError,
  type AiTool,
  type ConversationModeControl,
} from '../ai-tools/ai-tool';
import { modeLabel } from '../ai-tools/modes/mode-names';
import { APP_CONFIG } from '../config/app-config.provider';
import type { AppConfig } from '../config/app-config';
import {
  MODEL_ID_HELP,
  routeModel,
  type ModelRoute,
} from '../settings/model-route';
import {
  SettingsService,
  type AppSettings,
} from '../settings/settings.service';
import {
  CombinedPromptBuilder,
  type CombinedPromptOptions,
} from '../system-instruction/combined-prompt.builder';
import { SystemInstructionService } from '../system-instruction/system-instruction.service';
import { SOURCE_OF } from '../usage/usage-recorder';
import { LlmAdapterFactory } from './llm-adapter.factory';
import {
  LlmProviderError,
  type LlmConnection,
  type LlmAttachment,
  type LlmHistoryMessage,
  type LlmToolCall,
} from './llm-adapter';
import { TurnError } from './llm-errors';
import { BudgetRefusal } from '../budget/budget-refusal';
import type { TurnSource } from './turn-source';
import { untilAborted } from './until-aborted';

export interface TurnRequest {
  source: TurnSource;
  chatId: string | null;
  /** The assistant message being written, for tools that attach things to it. */
  messageId: string | null;
  history: LlmHistoryMessage[];
  userMessage: string;
  /** Files sent with the user message. */
  attachments?: LlmAttachment[];
  /** Stop button / caller cancellation. */
  signal: AbortSignal;
  /**
   * The turn's messages being stored while the model is called: a tool runs
   * only once this resolves to true (no tool acts on a message that was not
   * stored); false refuses every tool call (the caller aborts the turn then).
   */
  stored?: Promise<boolean>;
  /** A model id instead of the primary model. */
  model?: string;
  /** Passed to buildCombinedPrompt (Pulse appends its context through `extra`). */
  prompt?: CombinedPromptOptions;
  /**
   * Narrows the tool set (a caller's profile, e.g. an auto-reply's): the profile's
   * tools replace the modes, and the turn cannot switch mode. Tools still need to be available.
   */
  toolFilter?: (name: string) => boolean;
  /** The conversation's mode at the start of the turn (unknown or omitted: the default mode). */
  mode?: string;
  /** The account chosen with select_account, if any. */
  accountId?: string | null;
  /**
   * What the action policy needs beyond the source: the job and the tools the owner let
   * it use on its own, the third-party content the turn starts with, the contact whose
   * turn it is. Omitted: an owner's turn with nothing read yet.
   */
  policy?: Omit<ToolTurnStart, 'source' | 'runId'>;
  /** The owner allowed this one reply over the daily and monthly caps (attended turns only). */
  allowOverBudget?: boolean;
  /** Tool rounds this turn may use instead of LLM_MAX_TOOL_ROUNDS (a job's `maxRounds`). */
  maxToolRounds?: number;
  /** Tokens (input + output over all calls) this turn may use (a job's `maxTokensPerRun`). */
  maxTokens?: number;
  /** Stores a switch made during the turn (set_mode, select_account, a call to another mode's tool). */
  onModeChange?(state: {
    mode: string;
    accountId: string | null;
  }): Promise<void>;
}

export interface TurnListener {
  text(delta: string): void;
  toolCall(call: LlmToolCall): void;
  toolResult(record: ToolCallRecord): void;
  /** The conversation switched mode; the turn's next model request carries its tools. */
  modeSwitch?(mode: string): void;
  /** Third-party content marked the turn (every mark so far): the reply stores them. */
  taint?(marks: readonly TaintMark[]): void;
}

export interface TurnOutcome {
  model: string;
  usage?: TokenUsage;
}

export interface ResolvedModel {
  id: string;
  route: ModelRoute;
  connection: LlmConnection;
}

/**
 * One LLM turn, the only place that runs one: builds the prompt, picks the
 * tools, calls the provider adapter (which loops over tool rounds), executes
 * tool calls under a per-tool timeout, and enforces the turn caps. Chat, cron,
 * Pulse and auto-reply all come through here.
 */
@Injectable()
export class LlmRunner {
  private readonly logger = new Logger(LlmRunner.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: SettingsService,
    private readonly instruction: SystemInstructionService,
    private readonly prompt: CombinedPromptBuilder,
    private readonly tools: AiToolRegistry,
    private readonly adapters: LlmAdapterFactory,
  ) {}

  /** Checks a turn could start (model chosen, key present) without calling anyone. Throws TurnError 'not-configured'. */
  async resolveModel(modelId?: string): Promise<ResolvedModel> {
    return resolveModel(await this.settings.get(), modelId);
  }

  async runTurn(
    request: TurnRequest,
    listener: TurnListener,
  ): Promise<TurnOutcome> {
    const settings = await this.settings.get();
    const model = resolveModel(settings, request.model);
    const { toolTimeoutMs, turnTimeoutMs } = this.config.llm;
    const maxToolRounds =
      request.maxToolRounds ?? this.config.llm.maxToolRounds;
    const timeout = AbortSignal.timeout(turnTimeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);

    const instruction = await this.instruction.getSystemInstruction();
    const toolsAllowed =
      instruction.memoryEnabled && request.prompt?.toolsAllowed !== false;
    const profile = request.toolFilter;
    const availability = { source: request.source, settings };
    const state = {
      mode:
        request.mode && this.tools.hasMode(request.mode)
          ? request.mode
          : DEFAULT_MODE,
      accountId: request.accountId ?? null,
    };
    /** The tools and prompt of the next model request: the mode's tools (or the profile's), and the prompt that lists them. */
    const build = async (): Promise<{
      systemPrompt: string | null;
      tools: AiTool[];
    }> => {
      const tools = !toolsAllowed
        ? []
        : profile
          ? (await this.tools.available(availability)).filter((t) =>
              profile(t.name),
            )
          : await this.tools.toolsFor(availability, { mode: state.mode });
      const systemPrompt = await this.prompt.buildCombinedPrompt({
        source: request.source,
        ...request.prompt,
        toolsAllowed,
        toolFilter: profile,
        mode: profile ? undefined : state.mode,
        offeredTools: tools.map((t) => t.name),
        accountId: profile ? undefined : state.accountId,
        userMessage: request.userMessage,
      });
      return { systemPrompt, tools };
    };
    let current = await build();
    // A call to a tool that was not offered (a model making one up, or obeying injected text) is refused,
    // unless exactly one mode holds it: then the conversation switches there (see executeTool below).
    let offered = new Set(current.tools.map((t) => t.name));
    let switched = false;
    const switchMode = async (mode: string): Promise<void> => {
      if (mode === state.mode) return;
      state.mode = mode;
      current = await build();
      offered = new Set(current.tools.map((t) => t.name));
      switched = true;
      if (!signal.aborted) listener.modeSwitch?.(mode);
      await request
        .onModeChange?.({ ...state })
        .catch((error: Error) =>
          this.logger.warn(`Could not store the mode switch: ${error.message}`),
        );
    };
    const conversation: ConversationModeControl | undefined = profile
      ? undefined
      : {
          get mode() {
            return state.mode;
          },
          get accountId() {
            return state.accountId;
          },
          setMode: switchMode,
          selectAccount: async (accountId) => {
            state.accountId = accountId;
            // The next request's prompt names the newly selected account.
            current = await build();
            await request
              .onModeChange?.({ ...state })
              .catch((error: Error) =>
                this.logger.warn(
                  `Could not store the selected account: ${error.message}`,
                ),
              );
          },
        };
    const turn = new ToolTurn({
      ...request.policy,
      source: request.source,
      runId: request.messageId,
    });
    if (listener.taint) {
      const tell = listener.taint.bind(listener);
      if (turn.tainted) tell(turn.taint);
      turn.onTaint(tell);
    }
    const context = {
      ...availability,
      chatId: request.chatId,
      messageId: request.messageId,
      conversation,
      turn,
    };
    /** Runs a call of a tool the current mode does not offer: switches to the one mode that holds it, or refuses. */
    const runElsewhere = async (
      name: string,
      args: Record<string, unknown>,
      toolSignal: AbortSignal,
    ): Promise<ToolCallOutcome> => {
      const tool = this.tools.tool(name);
      const holders =
        conversation && tool && (await this.tools.isUsable(tool, availability))
          ? this.tools.modesOf(name)
          : [];
      if (holders.length > 1)
        return plain(
          toolError(
            `The tool '${name}' is not in the current mode '${state.mode}'; the modes ${holders.map((m) => `'${m}'`).join(' and ')} hold it: call set_mode with one of them first.`,
          ),
        );
      if (holders.length === 0)
        return plain(
          toolError(`The tool '${name}' is not available in this reply.`),
        );
      await switchMode(holders[0]);
      const outcome = await this.tools.call(name, args, {
        ...context,
        signal: toolSignal,
      });
      return {
        ...outcome,
        result: withModeNote(
          outcome.result,
          `Switched to ${modeLabel(holders[0])}, which holds ${name}; its tools are loaded now.`,
        ),
      };
    };

    const adapter = this.adapters.forCall(model, {
      source: request.source,
      allowOverBudget: request.allowOverBudget,
      maxTokens: request.maxTokens,
    });
    try {
      const result = await adapter.streamTurn(
        {
          model: model.route.model,
          systemPrompt: current.systemPrompt,
          history: request.history,
          userMessage: request.userMessage,
          attachments: request.attachments,
          tools: current.tools.length
            ? this.tools.specsOf(current.tools)
            : null,
          maxToolRounds,
          maxOutputTokens: settings.outputLimits[SOURCE_OF[request.source]],
          signal,
        },
        {
          onText: (delta) => {
            if (!signal.aborted) listener.text(delta);
          },
          nextRequest: async () => {
            if (!switched) return null;
            switched = false;
            return {
              systemPrompt: current.systemPrompt,
              tools: this.tools.specsOf(current.tools),
            };
          },
          executeTool: async (call) => {
            listener.toolCall(call);
            const started = performance.now();
            if (request.stored && !(await request.stored)) {
              const result = toolError(
                'The message could not be saved, so this tool was not run.',
              );
              listener.toolResult({
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                result,
                error: errorOf(result),
                durationMs: 0,
              });
              return result;
            }
            const limit = this.tools.timeoutOf(call.name, toolTimeoutMs);
            const toolSignal = AbortSignal.any([
              signal,
              AbortSignal.timeout(limit),
            ]);
            // The registry answers every call with a JSON string and never throws, so a rejection here is the abort.
            const outcome = await untilAborted(
              toolSignal,
              () =>
                offered.has(call.name)
                  ? this.tools.call(call.name, call.arguments, {
                      ...context,
                      signal: toolSignal,
                    })
                  : runElsewhere(call.name, call.arguments, toolSignal),
              () => new Error('abandoned'),
            ).catch(() =>
              plain(
                signal.aborted
                  ? toolError(
                      'The reply was cancelled before this tool finished.',
                    )
                  : toolError(
                      `The tool '${call.name}' did not finish within ${seconds(limit)} and was abandoned.`,
                    ),
              ),
            );
            const { result } = outcome;
            listener.toolResult({
              id: call.id,
              name: call.name,
              arguments: call.arguments,
              result,
              error: errorOf(result),
              durationMs: Math.round(performance.now() - started),
              ...(outcome.taint ? { taint: outcome.taint } : {}),
              ...(outcome.pendingActionId
                ? { pendingActionId: outcome.pendingActionId }
                : {}),
            });
            return result;
          },
        },
      );
      if (result.toolRoundsExhausted) {
        throw new TurnError(
          'tool-cap',
          `Metatron stopped after ${maxToolRounds} rounds of tool calls without finishing its answer (the limit per reply). Ask it to continue if needed.`,
        );
      }
      if (signal.aborted) throw abortReason(request.signal, turnTimeoutMs);
      return { model: model.id, usage: result.usage };
    } catch (error) {
      if (error instanceof TurnError) throw error;
      if (signal.aborted) throw abortReason(request.signal, turnTimeoutMs);
      if (error instanceof BudgetRefusal)
        throw new TurnError('budget', error.message, error.callsBefore > 0);
      if (error instanceof LlmProviderError)
        throw new TurnError('provider', error.message);
      this.logger.error(
        `Turn failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      throw new TurnError(
        'internal',
        'The reply failed because of an internal error; see the server log.',
      );
    }
  }
}

export function resolveModel(
  settings: AppSettings,
  modelId?: string,
): ResolvedModel {
  const id = modelId ?? settings.primaryModel;
  if (!id)
    throw new TurnError(
      'not-configured',
      'No model is configured: choose a primary model in Settings.',
    );
  const route = routeModel(id);
  if (!route)
    throw new TurnError(
      'not-configured',
      `The model '${id}' is not ${MODEL_ID_HELP}. Change it in Settings.`,
    );
  if (route.provider === 'gemini') {
    if (!settings.geminiApiKey)
      throw new TurnError(
        'not-configured',
        `No Gemini API key is set for '${id}': add one in Settings.`,
      );
    return { id, route, connection: { apiKey: settings.geminiApiKey } };
  }
  if (route.provider === 'openai') {
    if (!settings.openaiApiKey)
      throw new TurnError(
        'not-configured',
        `No OpenAI API key is set for '${id}': add one in Settings.`,
      );
    return { id, route, connection: { apiKey: settings.openaiApiKey } };
  }
  const endpoint = settings.openaiCompatible.find(
    (e) => e.name === route.endpoint,
  );
  if (!endpoint)
    throw new TurnError(
      'not-configured',
      `The endpoint '${route.endpoint}' of model '${id}' is not configured: add it in Settings.`,
    );
  // Local servers (Ollama…) need no key, but the SDK wants a non-empty one.
  return {
    id,
    route,
    connection: {
      apiKey: endpoint.apiKey ?? 'no-key',
      baseUrl: endpoint.baseUrl,
    },
  };
}

function abortReason(
  callerSignal: AbortSignal,
  turnTimeoutMs: number,
): TurnError {
  return callerSignal.aborted
    ? new TurnError('stopped', 'Stopped.')
    : new TurnError(
        'timeout',
        `The reply took longer than the ${seconds(turnTimeoutMs)} limit and was stopped.`,
      );
}

/** 300000 → "300 s", 1500 → "1.5 s". */
function seconds(ms: number): string {
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
