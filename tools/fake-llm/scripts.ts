/**
 * What a test scripts and what the fake records: the reply shapes, the recorded
 * requests, and the per-provider queue that answers one scripted reply per request.
 */

/** One tool call the fake model makes. `arguments` may be a raw string (e.g. to send invalid JSON). */
export interface FakeToolCall {
  name: string;
  arguments?: Record<string, unknown> | string;
  /** OpenAI: defaults to `call_<random>`. Gemini: sent as `functionCall.id` only when set. */
  id?: string;
}

/** Token counts reported for a reply (defaults: 10 prompt, 5 completion). */
export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, served from the prompt cache (reported only when set). */
  cachedTokens?: number;
}

/** A streamed (or JSON) model reply: text pieces, then tool calls. */
export interface FakeModelReply {
  /** Text pieces, each sent as its own chunk, in order. */
  text?: string[];
  /** Tool calls made after the text (several calls = one reply with parallel calls). */
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** Wait this long before each chunk after the first (default 0). */
  chunkDelayMs?: number;
  /** Destroy the socket after this many scripted pieces were written (no finish, no [DONE]). */
  cutAfter?: number;
  /** Overrides the finish reason (OpenAI `stop`/`tool_calls`, Gemini `STOP`). */
  finishReason?: string;
  /**
   * A stalled upstream: after this many scripted pieces, send nothing more and keep the
   * connection open until the client goes away (0: silent once the headers are sent).
   */
  stallAfter?: number;
  /**
   * Destroys the connection before any response (a keep-alive socket reset under
   * the client: it sees ECONNRESET / "socket hang up"); the other fields are ignored.
   */
  reset?: boolean;
}

/** An HTTP error answered in the provider's own error body shape. */
export interface FakeErrorReply {
  status: number;
  message: string;
  /** OpenAI: the `Retry-After` header (seconds, or an HTTP date); Gemini: a RetryInfo `retryDelay` of that many seconds. */
  retryAfter?: string;
}

export type FakeReply = FakeModelReply | FakeErrorReply;

/** A reply, or a function choosing one from the request (e.g. to echo the prompt). */
export type FakeReplyScript =
  | FakeReply
  | ((request: FakeRecordedRequest) => FakeReply);

export interface FakeRecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (`undefined` when the body was not JSON). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The key the client sent: OpenAI `Authorization: Bearer …`, Gemini `x-goog-api-key` or `?key=`. */
  apiKey: string | null;
  /** OpenAI: `body.model`; Gemini: the model in the path. */
  model: string;
  stream: boolean;
  /** Multipart requests (OpenAI image edits): the file parts; the text fields are in `body`. */
  files?: FakeUploadedFile[];
}

export interface FakeUploadedFile {
  /** The form field, e.g. `image` or `image[]`. */
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** An image reply (`openaiImages` / `geminiImages`). Every field is optional: `{}` answers the default PNG. */
export interface FakeImageReply {
  /** The image bytes (default: `FAKE_PNG`, a real 4×3 PNG). */
  image?: Buffer;
  /** Gemini: the part's `mimeType` (default image/png). */
  mimeType?: string;
  /** Gemini: a text part before the image; with `noImage`, the only part (as when the model refuses). */
  text?: string;
  /** Answer without any image (OpenAI: `data: []`; Gemini: only the text part, `finishReason`). */
  noImage?: boolean;
  /** Gemini: the finish reason (default STOP). */
  finishReason?: string;
  /** Wait this long before answering (stops early when the client goes away). */
  delayMs?: number;
}

/** An HTTP error for an image request, optionally after a delay. */
export type FakeImageErrorReply = FakeErrorReply & { delayMs?: number };

export type FakeImageReplyScript =
  | FakeImageReply
  | FakeImageErrorReply
  | ((request: FakeRecordedRequest) => FakeImageReply | FakeImageErrorReply);

export interface FakeImageProvider {
  enqueue(...replies: FakeImageReplyScript[]): void;
  /** Answer when the queue is empty; `{}` (the default PNG) unless set; `null` answers HTTP 500. */
  fallback: FakeImageReplyScript | null;
  readonly requests: FakeRecordedRequest[];
  readonly pending: number;
  /** Clears the queue and the requests; the fallback goes back to `{}`. */
  reset(): void;
}

export interface FakeProvider {
  /** Replies answered in order, one per request. */
  enqueue(...replies: FakeReplyScript[]): void;
  /** Answer when the queue is empty; `null` (default) answers HTTP 500 "no scripted reply". */
  fallback: FakeReplyScript | null;
  /** Every request received, oldest first. */
  readonly requests: FakeRecordedRequest[];
  /** Replies still queued. */
  readonly pending: number;
  /** Clears the queue, the fallback and the recorded requests. */
  reset(): void;
}

export const DEFAULT_USAGE: FakeUsage = {
  promptTokens: 10,
  completionTokens: 5,
};

export function isErrorReply(reply: object): reply is FakeErrorReply {
  return typeof (reply as FakeErrorReply).status === 'number';
}

/** One provider's queue of scripted replies and the requests it received. */
export class ScriptedProvider<R extends object = FakeReply> {
  fallback: R | ((request: FakeRecordedRequest) => R) | null;
  readonly requests: FakeRecordedRequest[] = [];
  private readonly queue: Array<R | ((request: FakeRecordedRequest) => R)> = [];

  constructor(private readonly defaultFallback: R | null = null) {
    this.fallback = defaultFallback;
  }

  enqueue(...replies: Array<R | ((request: FakeRecordedRequest) => R)>): void {
    this.queue.push(...replies);
  }

  get pending(): number {
    return this.queue.length;
  }

  reset(): void {
    this.queue.length = 0;
    this.fallback = this.defaultFallback;
    this.requests.length = 0;
  }

  /** Records the request and answers the next scripted reply (or the fallback). */
  answer(request: FakeRecordedRequest): R | FakeErrorReply {
    this.requests.push(request);
    const script = this.queue.shift() ?? this.fallback;
    if (script === null)
      return {
        status: 500,
        message: 'fake-llm: no scripted reply for this request',
      };
    return typeof script === 'function' ? script(request) : script;
  }
}
