import {
  ApiError,
  type Content,
  type FunctionCall,
  type GenerateContentResponse,
  type HttpResponse,
  type Part,
} from '@google/genai';
import type {
  LlmAdapter,
  LlmConnection,
  LlmToolSpec,
  LlmTurnRequest,
  LlmTurnResult,
  LlmTurnSink,
} from '../llm-adapter';
import { LlmProviderError } from '../llm-adapter';
import { sendWithRetries } from './provider-retry';
import {
  abortedError,
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
import { geminiUserParts } from './attachment-parts';
import { toGeminiFunctionResponse, toGeminiHistory } from './history-mapping';
import { GeminiClient } from './gemini-stream';
import {
  GeminiConversation,
  geminiRequestBody,
  type GeminiRequestConfig,
} from './gemini-request';
import { createProviderFetch } from './provider-fetch';

/** No silence limit, as the SDK asks of Node's fetch: the stall guard and the turn's own limit bound a call. */
const geminiFetch = createProviderFetch({ silenceTimeoutMs: 0 });

export interface GeminiAdapterOptions {
  /** Per-request timeout in milliseconds (default none: the runner's signal bounds the turn). */
  timeoutMs?: number;
}

const DEFAULT_GEMINI_URL = 'https://generativelanguage.googleapis.com';

const UNDICI_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * In Node the SDK sends each request through Node's global undici dispatcher (found on `globalThis`)
 * with undici's idle timeouts turned off. In a VM context such as a Jest sandbox that dispatcher lives
 * on the outer realm and the SDK fails every request ("Undici globalDispatcher is not available");
 * there, hand the SDK plain `fetch` instead (undici's default 300 s idle timeouts then apply).
 * For the image and embedding clients: the chat adapter gives the SDK its own `fetch`.
 */
export function fetchFallback(): { fetch?: typeof fetch } {
  const scope = globalThis as unknown as Record<symbol, unknown>;
  if (scope[UNDICI_DISPATCHER]) return {};
  new Headers(); // makes Node initialise its dispatcher lazily, as the SDK does
  if (scope[UNDICI_DISPATCHER]) return {};
  return { fetch: (input, init) => fetch(input, init) };
}

/** The next streamed piece's JSON, or undefined at the end of the reply. */
async function nextPiece(
  pieces: AsyncGenerator<HttpResponse>,
): Promise<GenerateContentResponse | undefined> {
  const next = await pieces.next();
  if (next.done) return undefined;
  try {
    return (await next.value.json()) as GenerateContentResponse;
  } catch (error) {
    // A piece that is not JSON ends the reply: its body is cancelled, as the SDK's reader does.
    await pieces.return(undefined);
    throw error;
  }
}

/** Where the request failed: before the reply started (connect/HTTP status) or while it streamed. */
type Phase = 'connect' | 'stream';

class PhasedError extends Error {
  constructor(
    readonly phase: Phase,
    readonly original: unknown,
  ) {
    super('phased');
  }
}

/** The Gemini error body inside an ApiError message: `{"error":{"code","message","status","details"}}`. */
export function parseGeminiError(text: string): {
  message: string;
  reason?: string;
  /** The wait a 429 names (google.rpc.RetryInfo `retryDelay`, e.g. "1.5s"), in milliseconds. */
  retryDelayMs?: number;
} {
  const start = text.indexOf('{');
  if (start >= 0) {
    try {
      const body = JSON.parse(text.slice(start)) as {
        error?: {
          message?: unknown;
          details?: { reason?: unknown; retryDelay?: unknown }[];
        };
      };
      const message =
        typeof body.error?.message === 'string' ? body.error.message : text;
      const reason = body.error?.details?.find(
        (d) => typeof d?.reason === 'string',
      )?.reason as string | undefined;
      const delay = body.error?.details?.find(
        (d) => typeof d?.retryDelay === 'string',
      )?.retryDelay as string | undefined;
      const seconds = delay ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
      return {
        message,
        reason,
        ...(seconds ? { retryDelayMs: Number(seconds[1]) * 1_000 } : {}),
      };
    } catch {
      // not JSON: use the text
    }
  }
  return { message: text };
}

/**
 * Gemini through `@google/genai` chats: the seed's function-calling loop. Each reply's text is streamed,
 * its function calls are executed in order, the `functionResponse` parts are sent back, until a reply
 * has no calls or `maxToolRounds` rounds were used.
 * Abort: rejects with `LlmProviderError('aborted')` as soon as `request.signal` aborts, runs no further tool.
 */
export class GeminiAdapter implements LlmAdapter {
  private readonly ai: GeminiClient;
  private readonly provider: ProviderContext;
  /** The base URL requests go to (`connection.baseUrl`, else `GOOGLE_GEMINI_BASE_URL`, else Google's). */
  readonly baseUrl: string;

  constructor(
    connection: LlmConnection,
    providerName = 'Gemini',
    options: GeminiAdapterOptions = {},
  ) {
    const baseUrl =
      connection.baseUrl?.trim() ||
      process.env['GOOGLE_GEMINI_BASE_URL']?.trim() ||
      undefined;
    this.baseUrl = baseUrl ?? DEFAULT_GEMINI_URL;
    this.ai = new GeminiClient({
      apiKey: connection.apiKey,
      // Never the Vertex backend, whatever GOOGLE_GENAI_USE_VERTEXAI says.
      vertexai: false,
      // No `retryOptions`: the SDK then makes a single attempt (it retries only when they are given).
      httpOptions: {
        baseUrl: this.baseUrl,
        ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        fetch: geminiFetch,
      },
    });
    this.provider = {
      name: providerName,
      host: hostOf(this.baseUrl),
      apiKey: connection.apiKey,
    };
  }

  streamTurn(
    request: LlmTurnRequest,
    sink: LlmTurnSink,
  ): Promise<LlmTurnResult> {
    const { provider } = this;
    return untilAborted(
      request.signal,
      async () => {
        try {
          return await this.run(request, sink);
        } catch (error) {
          throw this.toProviderError(error, provider, request.signal);
        }
      },
      () => abortedError(provider),
    );
  }

  private async run(
    request: LlmTurnRequest,
    sink: LlmTurnSink,
  ): Promise<LlmTurnResult> {
    const { signal } = request;
    // A turn that starts with tools keeps calling them, even when a mode switch leaves none for a request.
    const hasTools = Boolean(request.tools?.length);
    const configFor = (
      systemPrompt: string | null,
      tools: LlmToolSpec[] | null,
    ): GeminiRequestConfig => ({
      systemPrompt,
      tools,
      ...(request.maxOutputTokens
        ? { maxOutputTokens: request.maxOutputTokens }
        : {}),
    });
    let config = configFor(request.systemPrompt, request.tools);

    // The new message goes with any user content the history ends on (e.g. function responses of a
    // reply that stopped on tool calls), so the contents keep alternating.
    const history: Content[] = toGeminiHistory(request.history);
    const trailing =
      history[history.length - 1]?.role === 'user'
        ? (history.pop()?.parts ?? [])
        : [];
    let message: Part[] = [
      ...trailing,
      ...geminiUserParts(request.userMessage, request.attachments),
    ];

    const conversation = new GeminiConversation(history);
    const usage = new UsageTotal();
    let rounds = 0;
    let generatedIds = 0;

    for (;;) {
      const reply = await this.streamReply(
        conversation,
        message,
        config,
        request,
        sink,
      );
      if (reply.usage) {
        usage.add(
          reply.usage.promptTokenCount,
          reply.usage.candidatesTokenCount,
          reply.usage.totalTokenCount,
        );
        const cached = reply.usage.cachedContentTokenCount;
        // Thinking tokens are billed as output.
        const thoughts = reply.usage.thoughtsTokenCount ?? 0;
        sink.onUsage?.({
          inputTokens: reply.usage.promptTokenCount ?? 0,
          outputTokens: (reply.usage.candidatesTokenCount ?? 0) + thoughts,
          totalTokens: reply.usage.totalTokenCount ?? 0,
          ...(cached ? { cachedInputTokens: cached } : {}),
        });
      }
      if (reply.blockReason && !reply.calls.length && !reply.sawText) {
        throw new LlmProviderError(
          'bad-request',
          `${this.provider.name} blocked the request (${reply.blockReason}).`,
        );
      }
      if (!reply.calls.length || !hasTools) return { usage: usage.toUsage() };
      if (rounds >= request.maxToolRounds)
        return { usage: usage.toUsage(), toolRoundsExhausted: true };
      rounds += 1;

      const responses: Part[] = [];
      for (const call of reply.calls) {
        if (signal.aborted) throw new LlmProviderError('aborted', 'aborted');
        const name = call.name ?? '';
        const result = await sink.executeTool({
          id: call.id || `call_${++generatedIds}`,
          name,
          arguments: call.args ?? {},
        });
        responses.push({
          functionResponse: {
            ...(call.id ? { id: call.id } : {}),
            name,
            response: toGeminiFunctionResponse(result),
          },
        });
      }
      if (signal.aborted) throw new LlmProviderError('aborted', 'aborted');
      // A tool may have switched the conversation's mode: the next request carries its tools at once.
      const next = await sink.nextRequest?.();
      if (next) config = configFor(next.systemPrompt, next.tools);
      message = responses;
    }
  }

  /** Sends one message and streams the reply: text to the sink, function calls and usage collected. */
  private async streamReply(
    conversation: GeminiConversation,
    message: Part[],
    config: GeminiRequestConfig,
    request: LlmTurnRequest,
    sink: LlmTurnSink,
  ): Promise<{
    calls: FunctionCall[];
    usage?: GenerateContentResponse['usageMetadata'];
    blockReason?: string;
    sawText: boolean;
  }> {
    const { contents, input } = conversation.contentsFor(message);
    const body = geminiRequestBody(contents, config);
    // Sent again after a transient failure before its first piece (nothing of it reached the sink
    // yet, and the conversation records a message only once its reply was read to the end).
    const { pieces, first } = await sendWithRetries(
      async () => {
        await sink.beforeCall?.();
        let pieces: AsyncGenerator<HttpResponse>;
        try {
          pieces = await this.ai.streamGenerateContent(
            request.model,
            body,
            request.signal,
          );
        } catch (error) {
          throw new PhasedError('connect', error);
        }
        try {
          return { pieces, first: await nextPiece(pieces) };
        } catch (error) {
          throw new PhasedError('stream', error);
        }
      },
      {
        signal: request.signal,
        classify: (error) =>
          error instanceof PhasedError || error instanceof LlmProviderError
            ? this.toProviderError(error, this.provider, request.signal)
            : null,
        retryAfter: (error) =>
          error instanceof PhasedError && error.original instanceof ApiError
            ? parseGeminiError(error.original.message).retryDelayMs
            : undefined,
      },
    );
    const calls: FunctionCall[] = [];
    const read: GenerateContentResponse[] = [];
    let usage: GenerateContentResponse['usageMetadata'];
    let blockReason: string | undefined;
    let sawText = false;
    let finished = false;
    let chunk = first;
    // Whether the pieces may still hold the response's body (their generator has not ended).
    let open = chunk !== undefined;
    try {
      while (chunk !== undefined) {
        read.push(chunk);
        sink.onActivity?.();
        if (request.signal.aborted) break;
        const candidate = chunk.candidates?.[0];
        if (candidate?.finishReason) finished = true;
        for (const part of candidate?.content?.parts ?? []) {
          if (part.thought) continue;
          if (part.text) {
            sawText = true;
            sink.onText(part.text);
          }
          if (part.functionCall) calls.push(part.functionCall);
        }
        // Each chunk carries the running total of this request.
        if (chunk.usageMetadata) usage = chunk.usageMetadata;
        if (chunk.promptFeedback?.blockReason)
          blockReason = chunk.promptFeedback.blockReason;
        try {
          chunk = await nextPiece(pieces);
        } catch (error) {
          open = false;
          throw error;
        }
        if (chunk === undefined) open = false;
      }
    } catch (error) {
      throw new PhasedError('stream', error);
    } finally {
      // Left early (an abort, a sink's error): the pieces cancel the response's body.
      if (open) await pieces.return(undefined);
    }
    if (request.signal.aborted)
      throw new LlmProviderError('aborted', 'aborted');
    conversation.record(input, read);
    // A stream that closed without a finish reason (and was not blocked) was cut short.
    if (!finished && !blockReason)
      throw new PhasedError('stream', new Error('terminated'));
    return { calls, usage, blockReason, sawText };
  }

  private toProviderError(
    error: unknown,
    provider: ProviderContext,
    signal: AbortSignal,
  ): LlmProviderError {
    const phase: Phase = error instanceof PhasedError ? error.phase : 'connect';
    const original = error instanceof PhasedError ? error.original : error;
    if (signal.aborted || isAbortFailure(original))
      return abortedError(provider);
    if (original instanceof LlmProviderError) return original;
    if (original instanceof ApiError) {
      const { message, reason } = parseGeminiError(original.message);
      // Gemini answers a wrong key with 400 INVALID_ARGUMENT / API_KEY_INVALID.
      if (
        original.status === 400 &&
        (reason === 'API_KEY_INVALID' || /API key not valid/i.test(message))
      ) {
        return new LlmProviderError(
          'auth',
          `The ${provider.name} API key was rejected (400).`,
          400,
        );
      }
      return statusError(provider, original.status, message);
    }
    if (isNetworkFailure(original))
      return phase === 'connect'
        ? connectError(provider, original)
        : cutError(provider);
    const message = String(
      (original as { message?: unknown } | null)?.message ?? '',
    );
    if (phase === 'stream' && /Incomplete JSON segment/.test(message)) {
      return cutError(provider);
    }
    return unknownError(provider, original);
  }
}
