import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import type { TokenUsage } from '@metatronos/shared-types';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
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
  RecentByText,
  statusError,
  UsageTotal,
  unknownError,
} from './adapter-support';
import { untilAborted } from '../until-aborted';
import { continueFrom, retryAfterMs, sendWithRetries } from './provider-retry';
import { sseJsonEvents } from './sse-json-events';
import { OpenAiClient } from './openai-client';
import { toOpenAiMessages } from './history-mapping';
import {
  createProviderFetch,
  UNDICI_SILENCE_TIMEOUT_MS,
} from './provider-fetch';

/** Node's fetch limits as before (a silent response fails after 300 s), with less CPU per call. */
const openAiFetch = createProviderFetch({
  silenceTimeoutMs: UNDICI_SILENCE_TIMEOUT_MS,
});

export interface OpenAiAdapterOptions {
  /** The SDK's per-request timeout in milliseconds (default: the SDK's 10 minutes). */
  timeoutMs?: number;
}

/** A call's raw arguments and, when valid, the object. */
interface ParsedArguments {
  raw: string;
  args: Record<string, unknown> | null;
  problem?: string;
}

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
 * With tools, the adapter's own loop (`runWithTools`) streams each model call and executes its tools one at
 * a time in the order the model listed them; the tool set may change between calls (a mode switch). Without tools, one streamed call.
 * Abort: rejects with `LlmProviderError('aborted')` as soon as `request.signal` aborts, runs no further tool.
 */
export class OpenAiAdapter implements LlmAdapter {
  private readonly client: OpenAiClient;
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
    this.client = new OpenAiClient({
      // The SDK refuses an empty key; local OpenAI-compatible servers often need none.
      apiKey: connection.apiKey || 'no-key',
      baseURL,
      // Retried by `openCall` instead, so that each attempt goes through the budget's `beforeCall`.
      maxRetries: 0,
      fetch: openAiFetch,
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
                () => sink.onActivity?.(),
                sink.onUsage?.bind(sink),
                sink.beforeCall?.bind(sink),
              );
        } catch (error) {
          throw this.toProviderError(error, provider, request.signal);
        }
      },
      () => abortedError(provider),
    );
  }

  private async runPlain(
    client: OpenAiClient,
    request: LlmTurnRequest,
    messages: ChatCompletionMessageParam[],
    onText: (delta: string) => void,
    provider: ProviderContext,
    onActivity: () => void,
    onUsage?: (usage: TokenUsage) => void,
    beforeCall?: () => Promise<void>,
  ): Promise<LlmTurnResult> {
    const usage = new UsageTotal();
    const stream = await this.openCall(
      client,
      {
        model: request.model,
        messages,
        ...this.outputLimit(request),
        stream: true,
        stream_options: { include_usage: true },
      },
      request.signal,
      provider,
      beforeCall,
    );
    let finished = false;
    for await (const chunk of stream) {
      onActivity();
      addChunkUsage(usage, chunk, onUsage);
      const choice = chunk.choices[0];
      if (choice?.delta?.content) onText(choice.delta.content);
      if (choice?.finish_reason) finished = true;
    }
    // The events end quietly on abort (as the SDK's stream did).
    if (request.signal.aborted) throw abortedError(provider);
    if (!finished) throw cutError(provider);
    return { usage: usage.toUsage() };
  }

  /**
   * The tool loop, written here rather than with the SDK's `runTools()`: that runner fixes the
   * tools for the whole run, and a mode switch must change them for the very next request.
   * Each model call is one streamed `/chat/completions` request; its tool calls run one at a
   * time in the order the model listed them, their results go back as `tool` messages.
   */
  private async runWithTools(
    client: OpenAiClient,
    request: LlmTurnRequest,
    specs: LlmToolSpec[],
    messages: ChatCompletionMessageParam[],
    sink: LlmTurnSink,
    onText: (delta: string) => void,
  ): Promise<LlmTurnResult> {
    const { signal } = request;
    const usage = new UsageTotal();
    const conversation = [...messages];
    let tools = specs;
    let generatedIds = 0;

    for (let round = 0; ; round++) {
      const stream = await this.openCall(
        client,
        {
          model: request.model,
          messages: conversation,
          ...this.outputLimit(request),
          stream: true,
          stream_options: { include_usage: true },
        },
        signal,
        this.provider,
        sink.beforeCall?.bind(sink),
        tools,
      );
      const reply = new StreamedReply();
      for await (const chunk of stream) {
        sink.onActivity?.();
        addChunkUsage(usage, chunk, sink.onUsage?.bind(sink));
        const content = reply.add(chunk);
        if (content) onText(content);
      }
      // The events end quietly on abort (as the SDK's stream did).
      if (signal.aborted) throw new APIUserAbortError();
      const message = reply.message();
      const calls = message.toolCalls.flatMap((call) =>
        call.type === 'function'
          ? [{ ...call, id: call.id || `call_${++generatedIds}` }]
          : [],
      );
      if (!calls.length) return { usage: usage.toUsage() };
      // The call after the last allowed round: its tools are not run, the turn ends there.
      if (round >= request.maxToolRounds)
        return { usage: usage.toUsage(), toolRoundsExhausted: true };

      conversation.push({
        role: 'assistant',
        content: message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: {
            name: call.function.name,
            arguments: call.function.arguments,
          },
        })),
      });
      for (const call of calls) {
        if (signal.aborted) throw new APIUserAbortError();
        const input = parseArguments(call.function.arguments);
        const result = input.args
          ? await sink.executeTool({
              id: call.id,
              name: call.function.name,
              arguments: input.args,
            })
          : JSON.stringify({ error: input.problem });
        conversation.push({
          role: 'tool',
          tool_call_id: call.id,
          content: result,
        });
      }
      if (signal.aborted) throw new APIUserAbortError();
      // A tool may have switched the conversation's mode: the next request carries its tools and prompt.
      const next = await sink.nextRequest?.();
      if (next) {
        tools = next.tools;
        replaceSystemPrompt(conversation, next.systemPrompt);
      }
    }
  }

  /**
   * One model call up to its first chunk, sent again after a transient failure
   * (`sendWithRetries`): until that chunk nothing of the call reached the sink,
   * so a new attempt cannot repeat text or a tool call. The SDK's own retries
   * are off (`maxRetries: 0`) because they would bypass `beforeCall`, where the
   * budget reserves each call.
   */
  private async openCall(
    client: OpenAiClient,
    body: ChatCompletionCreateParamsStreaming,
    signal: AbortSignal,
    provider: ProviderContext,
    beforeCall?: () => Promise<void>,
    /** Offered as `tools`, their JSON made once per spec (see `encodedBody`). */
    tools: readonly LlmToolSpec[] = [],
  ): Promise<AsyncIterable<ChatCompletionChunk>> {
    return sendWithRetries(
      async () => {
        await beforeCall?.();
        // What `chat.completions.create()` posts, with the body already JSON (see encodedBody), by the
        // SDK's URL, headers and time limit made once (OpenAiClient); the reply's events are read from
        // the response as the SDK's `Stream` reads them (sseJsonEvents).
        const response = await client.postJsonStream(
          '/chat/completions',
          encodedBody(body, tools),
          signal,
        );
        const chunks = sseJsonEvents<ChatCompletionChunk>(response);
        return continueFrom(await chunks.next(), chunks);
      },
      {
        signal,
        // The SDK's own request timeout is a deliberate limit, not a hiccup.
        classify: (error) =>
          error instanceof APIConnectionTimeoutError
            ? null
            : this.toProviderError(error, provider, signal),
        retryAfter: (error) =>
          error instanceof APIError && error.headers
            ? retryAfterMs((name) => error.headers?.get(name))
            : undefined,
      },
    );
  }

  /**
   * OpenAI's own API takes `max_completion_tokens` (its reasoning models refuse
   * `max_tokens`); OpenAI-compatible servers (Ollama, vLLM, LM Studio) know `max_tokens`.
   */
  private outputLimit(
    request: LlmTurnRequest,
  ): { max_completion_tokens: number } | { max_tokens: number } | object {
    if (!request.maxOutputTokens) return {};
    return this.pdfInline
      ? { max_completion_tokens: request.maxOutputTokens }
      : { max_tokens: request.maxOutputTokens };
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
        return statusError(
          provider,
          error.status,
          message,
          typeof error.code === 'string' ? error.code : undefined,
        );
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

interface StreamedToolCall {
  id: string;
  type: string | undefined;
  function: { name: string | undefined; arguments: string | undefined };
}

/**
 * The first choice of a streamed completion, put together chunk by chunk as the SDK's
 * `chat.completions.stream()` helper does, without its events, snapshots and final copy (a
 * good part of a turn's CPU). Its checks are the helper's: a reply without `finish_reason`
 * was cut, a tool call without a type, name or arguments is malformed.
 */
class StreamedReply {
  private chunks = 0;
  private role: string | undefined;
  private content: string | null = null;
  private finishReason: string | null = null;
  private readonly toolCalls: StreamedToolCall[] = [];

  /** Takes one chunk; returns the text it adds to the reply (what the helper's `content` event carried). */
  add(chunk: ChatCompletionChunk): string | null {
    this.chunks++;
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return null;
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) return null;
    if (delta.role) this.role = delta.role;
    for (const call of delta.tool_calls ?? []) {
      const snapshot = (this.toolCalls[call.index] ??= {
        id: '',
        type: undefined,
        function: { name: undefined, arguments: undefined },
      });
      if (call.id) snapshot.id = call.id;
      if (call.type) snapshot.type = call.type;
      if (call.function) {
        snapshot.function.name ??= call.function.name ?? '';
        snapshot.function.arguments ??= '';
      }
      if (call.function?.name) snapshot.function.name = call.function.name;
      if (call.function?.arguments)
        snapshot.function.arguments += call.function.arguments;
    }
    if (!delta.content) return null;
    this.content = (this.content ?? '') + delta.content;
    return this.role === 'assistant' ? delta.content : null;
  }

  /** The finished message; throws as the helper did when the stream is cut or malformed. */
  message(): {
    content: string | null;
    toolCalls: Array<{
      id: string;
      type: string;
      function: { name: string; arguments: string };
    }>;
  } {
    if (!this.chunks)
      throw new Error('request ended without sending any chunks');
    if (!this.finishReason)
      throw new Error('missing finish_reason for choice 0');
    if (!this.role) throw new Error('missing role for choice 0');
    return {
      content: this.content,
      toolCalls: this.toolCalls.filter(Boolean).map((call, i) => {
        const { type, function: fn } = call;
        if (type == null)
          throw new Error(`missing choices[0].tool_calls[${i}].type`);
        if (fn.name == null)
          throw new Error(`missing choices[0].tool_calls[${i}].function.name`);
        if (fn.arguments == null)
          throw new Error(
            `missing choices[0].tool_calls[${i}].function.arguments`,
          );
        return {
          id: call.id,
          type,
          function: { name: fn.name, arguments: fn.arguments },
        };
      }),
    };
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
    const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
    onUsage?.({
      inputTokens: chunk.usage.prompt_tokens,
      outputTokens: chunk.usage.completion_tokens,
      totalTokens: chunk.usage.total_tokens,
      ...(cached ? { cachedInputTokens: cached } : {}),
    });
  }
}

/** Each spec's `tools` entry as UTF-8 JSON: specs are the registry's cached objects, never changed in place. */
const toolJson = new WeakMap<LlmToolSpec, Buffer>();
/** The latest system messages as UTF-8 JSON, by their text. */
const systemMessageJson = new RecentByText((content) =>
  Buffer.from(JSON.stringify({ role: 'system', content })),
);
const MESSAGES_OPEN = '"messages":[';
const COMMA = Buffer.from(',');
const TOOLS_OPEN = Buffer.from(',"tools":[');
const TOOLS_CLOSE = Buffer.from(']}');

/**
 * The request's JSON as bytes, with the system message and `tools` spliced in from JSON made once:
 * each tool's once per spec (the tool list is most of a request and the same on every turn of a
 * mode), the system message's once per prompt text (`RecentByText`). One buffer, written once: a
 * string spliced from the parts was flattened again to measure its length and encoded again to write
 * it (~40 KB of garbage a request of 11 KB). Posted by `OpenAiClient.postJsonStream` as
 * `chat.completions.create` posts its JSON.
 */
export function encodedBody(
  body: ChatCompletionCreateParamsStreaming,
  tools: readonly LlmToolSpec[],
): Buffer {
  const pieces: (string | Buffer)[] = [];
  const [first] = body.messages;
  let rest: string;
  if (
    first?.role === 'system' &&
    typeof first.content === 'string' &&
    Object.keys(first).length === 2
  ) {
    rest = JSON.stringify({ ...body, messages: body.messages.slice(1) });
    // The key's first match is the key: inside a string value every quote is escaped.
    const at = rest.indexOf(MESSAGES_OPEN) + MESSAGES_OPEN.length;
    pieces.push(rest.slice(0, at), systemMessageJson.get(first.content));
    if (rest[at] !== ']') pieces.push(COMMA);
    rest = rest.slice(at);
  } else rest = JSON.stringify(body);
  // No `tools` key without tools (OpenAI refuses an empty list).
  if (!tools.length) pieces.push(rest);
  else {
    pieces.push(rest.slice(0, -1), TOOLS_OPEN);
    for (const [i, spec] of tools.entries()) {
      let json = toolJson.get(spec);
      if (json === undefined) {
        json = Buffer.from(JSON.stringify(toOpenAiTool(spec)));
        toolJson.set(spec, json);
      }
      if (i) pieces.push(COMMA);
      pieces.push(json);
    }
    pieces.push(TOOLS_CLOSE);
  }
  let size = 0;
  for (const piece of pieces)
    size += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces)
    at +=
      typeof piece === 'string'
        ? bytes.write(piece, at)
        : piece.copy(bytes, at);
  return bytes;
}

function toOpenAiTool(spec: LlmToolSpec): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: {
      name: spec.name,
      description: spec.description,
      // The tool's JSON Schema as it is (the SDK's type is stricter about `properties`).
      parameters: spec.parameters as unknown as Record<string, unknown>,
    },
  };
}

/** Puts the turn's new system prompt in place of the old one (first message), or removes it for `null`. */
function replaceSystemPrompt(
  conversation: ChatCompletionMessageParam[],
  systemPrompt: string | null,
): void {
  const hasSystem = conversation[0]?.role === 'system';
  if (systemPrompt === null) {
    if (hasSystem) conversation.shift();
    return;
  }
  const message: ChatCompletionMessageParam = {
    role: 'system',
    content: systemPrompt,
  };
  if (hasSystem) conversation[0] = message;
  else conversation.unshift(message);
}
