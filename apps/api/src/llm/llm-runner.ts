import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  TaintMark,
  TokenUsage,
  ToolCallRecord,
} from '@metatronos/shared-types';
import type { ToolTurnStart } from '../actions/tool-turn';
import { AiToolRegistry } from '../ai-tools/ai-tool-registry';
import { toolError } from '../ai-tools/ai-tool';
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
import { seconds, ToolSession } from './tool-session';
import { linkAbort } from './abort-link';

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

  /**
   * The tool path of a conversation outside a typed turn (a voice call): the
   * same gating, prompt and call handling as `runTurn`'s.
   */
  async openToolSession(
    request: Pick<
      TurnRequest,
      | 'source'
      | 'chatId'
      | 'prompt'
      | 'toolFilter'
      | 'mode'
      | 'accountId'
      | 'onModeChange'
    > &
      Partial<Pick<TurnRequest, 'policy' | 'userMessage' | 'allowOverBudget'>>,
    settings?: AppSettings,
    options: {
      /** Names the run for the action policy's send counter (the assistant message, or the call). */
      runId?: string | null;
      toolsAllowed?: boolean;
      onModeSwitch?(mode: string): void;
    } = {},
  ): Promise<ToolSession> {
    const current = settings ?? (await this.settings.get());
    const toolsAllowed =
      options.toolsAllowed ??
      ((await this.instruction.getSystemInstruction()).memoryEnabled &&
        request.prompt?.toolsAllowed !== false);
    return ToolSession.open(this.tools, this.prompt, this.logger, {
      ...request,
      availability: { source: request.source, settings: current },
      toolsAllowed,
      runId: options.runId ?? null,
      toolTimeoutMs: this.config.llm.toolTimeoutMs,
      onModeSwitch: options.onModeSwitch,
    });
  }

  async runTurn(
    request: TurnRequest,
    listener: TurnListener,
  ): Promise<TurnOutcome> {
    const settings = await this.settings.get();
    const model = resolveModel(settings, request.model);
    const { turnTimeoutMs } = this.config.llm;
    // The caller's Stop or the turn's time limit; released when the turn ends (nothing reads it after).
    const link = linkAbort([request.signal], turnTimeoutMs);
    const signal = link.signal;
    try {
      return await this.runLinked(request, listener, settings, model, signal);
    } finally {
      link.dispose();
    }
  }

  private async runLinked(
    request: TurnRequest,
    listener: TurnListener,
    settings: AppSettings,
    model: ResolvedModel,
    signal: AbortSignal,
  ): Promise<TurnOutcome> {
    const maxToolRounds =
      request.maxToolRounds ?? this.config.llm.maxToolRounds;
    const { turnTimeoutMs } = this.config.llm;
    const instruction = await this.instruction.getSystemInstruction();
    const tools = await this.openToolSession(request, settings, {
      runId: request.messageId,
      toolsAllowed:
        instruction.memoryEnabled && request.prompt?.toolsAllowed !== false,
      onModeSwitch: (mode) => {
        if (!signal.aborted) listener.modeSwitch?.(mode);
      },
    });
    if (listener.taint) {
      const tell = listener.taint.bind(listener);
      if (tools.turn.tainted) tell(tools.turn.taint);
      tools.turn.onTaint(tell);
    }

    const adapter = this.adapters.forCall(model, {
      source: request.source,
      allowOverBudget: request.allowOverBudget,
      maxTokens: request.maxTokens,
    });
    try {
      const result = await adapter.streamTurn(
        {
          model: model.route.model,
          systemPrompt: tools.systemPrompt,
          history: request.history,
          userMessage: request.userMessage,
          attachments: request.attachments,
          tools: tools.specs.length ? tools.specs : null,
          maxToolRounds,
          maxOutputTokens: settings.outputLimits[SOURCE_OF[request.source]],
          signal,
        },
        {
          onText: (delta) => {
            if (!signal.aborted) listener.text(delta);
          },
          nextRequest: async () =>
            tools.takeChange()
              ? { systemPrompt: tools.systemPrompt, tools: tools.specs }
              : null,
          executeTool: async (call) => {
            listener.toolCall(call);
            if (request.stored && !(await request.stored)) {
              const result = toolError(
                'The message could not be saved, so this tool was not run.',
              );
              listener.toolResult({
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                result,
                error: toolErrorText(result),
                durationMs: 0,
              });
              return result;
            }
            const run = await tools.run(call, signal, request.messageId);
            listener.toolResult({
              id: call.id,
              name: call.name,
              arguments: call.arguments,
              ...run,
            });
            return run.result;
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
        throw new TurnError(
          error.runLimit ? 'run-tokens' : 'budget',
          error.message,
          error.callsBefore > 0,
        );
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

/** The error a `toolError()` answer carries. */
function toolErrorText(result: string): string | null {
  try {
    const parsed = JSON.parse(result) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : null;
  } catch {
    return null;
  }
}
