import type {
  TextPart,
  TokenUsage,
  ToolCallPart,
} from '@metatronos/shared-types';

/**
 * A file sent with the new user message, read for this turn only: images and PDF as bytes (the
 * adapter encodes them the provider's way), text files as text (capped), or a file that could not be read.
 */
export type LlmAttachment = {
  name: string;
  mime: string;
  size: number;
  /** The attachment id (edit_image takes an image's). */ id?: string;
} & (
  | { kind: 'image' | 'pdf'; data: Buffer }
  | { kind: 'text'; text: string; truncated: boolean }
  | { kind: 'unavailable' }
);

/** A JSON Schema object describing a tool's arguments (always `type: "object"` at the top). */
export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

/** What the model is told about one tool. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
}

/** Provider-neutral history: a user turn, or an assistant turn with its text and tool calls in order. */
export type LlmHistoryMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; parts: (TextPart | ToolCallPart)[] };

/** How to reach the provider: the key and, when set, another base URL (tests, proxies, Ollama…). */
export interface LlmConnection {
  apiKey: string;
  baseUrl?: string;
}

export interface LlmToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface LlmTurnRequest {
  /** The provider's own model name (the runner strips any `<endpoint>/` prefix). */
  model: string;
  /** `null`: send no system instruction. */
  systemPrompt: string | null;
  /** Earlier turns, oldest first (already cut to the history limit). */
  history: LlmHistoryMessage[];
  /** The new user message. */
  userMessage: string;
  /** Files sent with the new user message (earlier messages only keep an "[attached: name]" note). */
  attachments?: LlmAttachment[];
  /** `null` or empty: no tools, a plain streamed reply. */
  tools: LlmToolSpec[] | null;
  /** At most this many model calls that end in tool calls; then the turn ends with `toolRoundsExhausted`. */
  maxToolRounds: number;
  /** The output limit each model call carries (`max_completion_tokens` / `maxOutputTokens`); unset: the provider's own. */
  maxOutputTokens?: number;
  /** Aborted by Stop or the turn timeout: the adapter stops reading and resolves/rejects promptly. */
  signal: AbortSignal;
}

/** The runner's side of a turn: receives text as it streams and executes tools. */
export interface LlmTurnSink {
  onText(delta: string): void;
  /** Any chunk arrived from the provider (text or not): the stall guard's sign of life. */
  onActivity?(): void;
  /**
   * Runs one tool call and returns the JSON string to give back to the model.
   * Never throws: failures come back as `{"error": "..."}`. Timeouts are the runner's job.
   */
  executeTool(call: LlmToolCall): Promise<string>;
  /**
   * Asked after a round's tools ran, before the next model request of the turn: a
   * new system prompt and tool set when a tool changed them (a mode switch), else
   * null (keep the current ones). Empty `tools`: the next request offers none.
   */
  nextRequest?(): Promise<{
    systemPrompt: string | null;
    tools: LlmToolSpec[];
  } | null>;
  /** The tokens the provider reported for one model call, as soon as it ends (also when the turn fails later). */
  onUsage?(usage: TokenUsage): void;
  /**
   * Awaited right before each model request goes out (the budget reserves its
   * worst case here); a rejection means the request is not sent and the turn
   * fails with that error.
   */
  beforeCall?(): Promise<void>;
}

export interface LlmTurnResult {
  usage?: TokenUsage;
  /** True when the model still wanted tools after `maxToolRounds` rounds. */
  toolRoundsExhausted?: boolean;
}

/**
 * A provider adapter streams one turn, running the provider's tool loop.
 * Errors are thrown as LlmProviderError with a message the owner can read.
 */
export interface LlmAdapter {
  streamTurn(
    request: LlmTurnRequest,
    sink: LlmTurnSink,
  ): Promise<LlmTurnResult>;
}

export type LlmErrorKind =
  | 'auth'
  | 'rate-limit'
  | 'server'
  | 'network'
  | 'bad-request'
  | 'aborted'
  /** The provider sent nothing for the stall timeout (LLM_STALL_TIMEOUT_MS). */
  | 'stalled'
  /** The account has no credit left (HTTP 402, or OpenAI's `insufficient_quota`). */
  | 'quota'
  /** The call was not sent: it would cross a spend cap, or its model has no price. */
  | 'budget'
  | 'unknown';

/** A provider failure with a readable message (never the key, never a stack). */
export class LlmProviderError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmProviderError';
  }
}

/**
 * A sink that forwards every callback to `sink` except those in `overrides`: for
 * wrappers around an adapter (the stall guard, the usage meter), so a callback
 * added to `LlmTurnSink` later is never dropped by one of them.
 */
export function forwardingSink(
  sink: LlmTurnSink,
  overrides: Partial<LlmTurnSink>,
): LlmTurnSink {
  return {
    onText: (delta) => sink.onText(delta),
    executeTool: (call) => sink.executeTool(call),
    onActivity: () => sink.onActivity?.(),
    onUsage: (usage) => sink.onUsage?.(usage),
    ...(sink.beforeCall
      ? { beforeCall: () => sink.beforeCall?.() ?? Promise.resolve() }
      : {}),
    ...(sink.nextRequest
      ? { nextRequest: () => sink.nextRequest?.() ?? Promise.resolve(null) }
      : {}),
    ...overrides,
  };
}
