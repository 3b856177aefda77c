import type { TokenUsage } from '@metatronos/shared-types';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { JSONSchema } from 'openai/lib/jsonschema';
import type { RunnableToolFunctionWithParse } from 'openai/lib/RunnableFunction';
import type {
  LlmAdapter,
  LlmConnection,
  LlmToolSpec,
  LlmTurnRequest,
  LlmTurnResult,
  LlmTurnSink,
} from '../llm-adapter';
import { LlmProviderError } from '../llm-adapter';
import {
  abortedError,
  cleanProviderMessage,
  connectError,
  cutError,
  hostOf,
  isAbortFailure,
  isNetworkFailure,
  type ProviderContext,
  statusError,
  UsageTotal,
  unknownError,
} from './adapter-support';
import { untilAborted } from '../until-aborted';
import { toOpenAiMessages } from './history-mapping';

export interface OpenAiAdapterOptions {
  /** The SDK's per-request timeout in milliseconds (default: the SDK's 10 minutes). */
  timeoutMs?: number;
}

/** What the runner's `parse` hands to the tool function: the raw arguments and, when valid, the object. */
interface ParsedArguments {
  raw: string;
  args: Record<string, unknown> | null;
  problem?: string;
}

/** A tool call of the current model call, matched to the function invocation that runs it. */
interface PendingCall {
  id: string;
  name: string;
  raw: string;
  taken: boolean;
}

const ROUND_LIMIT_RESULT = JSON.stringify({
  error: 'The tool round limit was reached; this tool was not run.',
});

function parseArguments(raw: string): ParsedArguments {
  try {
    const value: unknown = JSON.parse(raw.trim() ? raw : '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return { raw, args: value as Record<string, unknown> };
    }
    return {
      raw,
      args: null,
      problem: 'The tool arguments must be a JSON object.',
    };
  } catch {
    return {
      raw,
      args: null,
      problem: 'The tool arguments are not valid JSON.',
    };
  }
}

/**
 * OpenAI chat completions (and any OpenAI-compatible endpoint: only the base URL and key differ).
 *
 * With tools, the SDK's `client.chat.completions.runTools()` runs the loop; tools are executed one at a
 * time in the order the model listed them. Without tools, one streamed `chat.completions.create()`.
 * Abort: rejects with `LlmProviderError('aborted')` as soon as `request.signal` aborts, runs no further tool.
 */
export class OpenAiAdapter implements LlmAdapter {
  private readonly client: OpenAI;
  private readonly provider: ProviderContext;
  /** OpenAI's own API (no endpoint base URL) reads PDF attachments; compatible endpoints do not. */
  private readonly pdfInline: boolean;

  /**
   * @param connection the key and, when set, another base URL (else `OPENAI_BASE_URL`, else api.openai.com).
   * @param providerName the name in error messages; default "OpenAI", or "OpenAI-compatible endpoint"
   *   when `connection.baseUrl` is set (pass the endpoint's name instead).
   */
  constructor(
    connection: LlmConnection,
    providerName?: string,
    options: OpenAiAdapterOptions = {},
  ) {
    const baseURL =
      connection.baseUrl?.trim() ||
      process.env['OPENAI_BASE_URL']?.trim() ||
      undefined;
    this.client = new OpenAI({
      // The SDK refuses an empty key; local OpenAI-compatible servers often need none.
      apiKey: connection.apiKey || 'no-key',
      baseURL,
      // The runner reports failures; a silently retried 429 or 500 would only delay that.
      maxRetries: 0,
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    this.pdfInline = !connection.baseUrl?.trim();
    this.provider = {
      name:
        providerName ??
        (connection.baseUrl ? 'OpenAI-compatible endpoint' : 'OpenAI'),
      host: hostOf(this.client.baseURL),
      apiKey: connection.apiKey,
    };
  }

  /** The base URL requests go to (after `OPENAI_BASE_URL` and the default). */
  get baseUrl(): string {
    return this.client.baseURL;
  }

  streamTurn(
    request: LlmTurnRequest,
    sink: LlmTurnSink,
  ): Promise<LlmTurnResult> {
    const { client, provider } = this;
    const messages = toOpenAiMessages(
      request.systemPrompt || null,
      request.history,
      request.userMessage,
      request.attachments,
      this.pdfInline,
    );
    const onText = (delta: string) => {
      if (delta && !request.signal.aborted) sink.onText(delta);
    };

    return untilAborted(
      request.signal,
      async () => {
        try {
          return request.tools?.length
            ? await this.runWithTools(
                client,
                request,
                request.tools,
                messages,
                sink,
                onText,
              )
            : await this.runPlain(
                client,
                request,
                messages,
                onText,
                provider,
                sink.onUsage?.bind(sink),
              );
        } catch (error) {
          throw this.toProviderError(error, provider, request.signal);
        }
      },
      () => abortedError(provider),
    );
  }

  private async runPlain(
    client: OpenAI,
    request: LlmTurnRequest,
    messages: ChatCompletionMessageParam[],
    onText: (delta: string) => void,
    provider: ProviderContext,
    onUsage?: (usage: TokenUsage) => void,
  ): Promise<LlmTurnResult> {
    const usage = new UsageTotal();
    const stream = await client.chat.completions.create(
      {
        model: request.model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: request.signal },
    );
    let finished = false;
    for await (const chunk of stream) {
      addChunkUsage(usage, chunk, onUsage);
      const choice = chunk.choices[0];
      if (choice?.delta?.content) onText(choice.delta.content);
      if (choice?.finish_reason) finished = true;
    }
    // The SDK ends the iteration quietly on abort.
    if (request.signal.aborted) throw abortedError(provider);
    if (!finished) throw cutError(provider);
    return { usage: usage.toUsage() };
  }

  private async runWithTools(
    client: OpenAI,
    request: LlmTurnRequest,
    specs: LlmToolSpec[],
    messages: ChatCompletionMessageParam[],
    sink: LlmTurnSink,
    onText: (delta: string) => void,
  ): Promise<LlmTurnResult> {
    const { signal } = request;
    const usage = new UsageTotal();
    let completions = 0;
    let roundLimitReached = false;
    let pending: PendingCall[] = [];
    let generatedIds = 0;
    // The runner starts all calls of a reply at once; this chain runs them one by one, in order.
    let queue: Promise<unknown> = Promise.resolve();

    const runTool =
      (name: string) =>
      (input: ParsedArguments): Promise<string> => {
        // The runner does not pass the call id: take it from the completion it came from.
        const call =
          pending.find(
            (c) => !c.taken && c.name === name && c.raw === input.raw,
          ) ?? pending.find((c) => !c.taken && c.name === name);
        if (call) call.taken = true;
        const id = call?.id ?? `call_${++generatedIds}`;
        if (roundLimitReached) return Promise.resolve(ROUND_LIMIT_RESULT);
        if (!input.args)
          return Promise.resolve(JSON.stringify({ error: input.problem }));
        const args = input.args;
        const task = queue.then(() => {
          if (signal.aborted) throw new APIUserAbortError();
          return sink.executeTool({ id, name, arguments: args });
        });
        queue = task.catch(() => undefined);
        return task;
      };

    const tools: RunnableToolFunctionWithParse<ParsedArguments>[] = specs.map(
      (spec) => ({
        type: 'function',
        function: {
          name: spec.name,
          description: spec.description,
          // The tool's JSON Schema as it is (the SDK's JSONSchema type is stricter about `properties`).
          parameters: spec.parameters as unknown as JSONSchema,
          parse: parseArguments,
          function: runTool(spec.name),
        },
      }),
    );

    const runner = client.chat.completions.runTools(
      {
        model: request.model,
        messages,
        tools,
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal, maxChatCompletions: request.maxToolRounds + 1 },
    );
    runner.on('content', (delta) => onText(delta));
    runner.on('chunk', (chunk) =>
      addChunkUsage(usage, chunk, sink.onUsage?.bind(sink)),
    );
    // Emitted for each completed model call, before its tools run.
    runner.on('chatCompletion', (completion) => {
      completions += 1;
      const toolCalls = completion.choices[0]?.message.tool_calls ?? [];
      pending = toolCalls.flatMap((call) =>
        call.type === 'function'
          ? [
              {
                id: call.id,
                name: call.function.name,
                raw: call.function.arguments,
                taken: false,
              },
            ]
          : [],
      );
      // The call after the last allowed round: its tools are not run, the turn ends there.
      roundLimitReached =
        completions > request.maxToolRounds && pending.length > 0;
    });

    await runner.done();
    const last = runner.allChatCompletions().at(-1);
    const exhausted = Boolean(last?.choices[0]?.message.tool_calls?.length);
    return {
      usage: usage.toUsage(),
      ...(exhausted ? { toolRoundsExhausted: true } : {}),
    };
  }

  private toProviderError(
    error: unknown,
    provider: ProviderContext,
    signal: AbortSignal,
  ): LlmProviderError {
    if (error instanceof LlmProviderError) return error;
    if (
      signal.aborted ||
      error instanceof APIUserAbortError ||
      isAbortFailure(error)
    )
      return abortedError(provider);
    if (error instanceof APIConnectionTimeoutError) {
      return new LlmProviderError(
        'network',
        `${provider.name} did not answer in time (${provider.host}).`,
      );
    }
    if (error instanceof APIConnectionError)
      return connectError(provider, error);
    if (error instanceof APIError) {
      const body = error.error as { message?: unknown } | undefined;
      const message =
        typeof body?.message === 'string' ? body.message : error.message;
      if (typeof error.status === 'number')
        return statusError(provider, error.status, message);
      // An error event inside the stream (no HTTP status).
      return new LlmProviderError(
        'server',
        `${provider.name} reported an error mid-reply: ${cleanProviderMessage(message, provider.apiKey)}`,
      );
    }
    const message = String(
      (error as { message?: unknown } | null)?.message ?? '',
    );
    if (
      isNetworkFailure(error) ||
      /missing finish_reason|stream ended without/i.test(message)
    ) {
      return cutError(provider);
    }
    return unknownError(provider, error);
  }
}

function addChunkUsage(
  usage: UsageTotal,
  chunk: ChatCompletionChunk,
  onUsage?: (usage: TokenUsage) => void,
): void {
  if (chunk.usage) {
    usage.add(
      chunk.usage.prompt_tokens,
      chunk.usage.completion_tokens,
      chunk.usage.total_tokens,
    );
    // The last chunk of a completion carries its usage (include_usage).
    onUsage?.({
      inputTokens: chunk.usage.prompt_tokens,
      outputTokens: chunk.usage.completion_tokens,
      totalTokens: chunk.usage.total_tokens,
    });
  }
}
