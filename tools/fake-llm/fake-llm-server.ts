/**
 * A local stand-in for the OpenAI and Gemini HTTP APIs, scripted per test.
 *
 * One HTTP server on 127.0.0.1 answers both wire formats:
 * - OpenAI: `POST /v1/chat/completions` (SSE `data: {chunk}` … `data: [DONE]`, or JSON when not streaming)
 * - Gemini: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and `:generateContent`
 * - Images: OpenAI `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart), and Gemini
 *   `:generateContent` asking for `responseModalities: ['IMAGE', …]`, each answered from its own queue
 *   (`openaiImages`, `geminiImages`) with a small real PNG by default
 *
 * Plain Node (no test framework imports): used by Jest specs, Playwright and benchmarks alike.
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { deflateSync } from 'node:zlib';

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
}

/** An HTTP error answered in the provider's own error body shape. */
export interface FakeErrorReply {
  status: number;
  message: string;
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

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `${url}/v1` — the OpenAI SDK's `baseURL` / `OPENAI_BASE_URL`. */
  openaiBaseUrl: string;
  /** `url` — the genai SDK's `httpOptions.baseUrl` / `GOOGLE_GEMINI_BASE_URL`. */
  geminiBaseUrl: string;
  openai: FakeProvider;
  gemini: FakeProvider;
  /** OpenAI `/v1/images/generations` and `/v1/images/edits`. */
  openaiImages: FakeImageProvider;
  /** Gemini `:generateContent` requests asking for image output. */
  geminiImages: FakeImageProvider;
  /** Resets every provider. */
  reset(): void;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

const DEFAULT_USAGE: FakeUsage = { promptTokens: 10, completionTokens: 5 };

function isErrorReply(reply: object): reply is FakeErrorReply {
  return typeof (reply as FakeErrorReply).status === 'number';
}

class ScriptedProvider<R extends object = FakeReply> {
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

  next(request: FakeRecordedRequest): R | FakeErrorReply {
    const script = this.queue.shift() ?? this.fallback;
    if (script === null)
      return {
        status: 500,
        message: 'fake-llm: no scripted reply for this request',
      };
    return typeof script === 'function' ? script(request) : script;
  }
}

/** Writes chunks with optional delays, stopping quietly when the client went away. */
class ChunkWriter {
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.wake?.();
    });
  }

  get gone(): boolean {
    return this.closed || this.res.destroyed;
  }

  write(data: string): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.res.write(data, () => resolve());
    });
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.wake = null;
        resolve();
      }, ms);
    });
  }

  /** Cuts the connection without finishing the chunked body, as a dropped upstream would. */
  async cut(): Promise<void> {
    await this.sleep(20);
    this.res.socket?.destroy();
  }
}

function argumentsString(call: FakeToolCall): string {
  if (typeof call.arguments === 'string') return call.arguments;
  return JSON.stringify(call.arguments ?? {});
}

function argumentsObject(call: FakeToolCall): Record<string, unknown> {
  if (typeof call.arguments !== 'string') return call.arguments ?? {};
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Splits a string into up to `n` pieces (how the real API streams tool arguments). */
function splitInPieces(value: string, n: number): string[] {
  if (value.length <= 1) return [value];
  const size = Math.ceil(value.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size)
    pieces.push(value.slice(i, i + size));
  return pieces;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

let idCounter = 0;
function randomId(prefix: string): string {
  idCounter += 1;
  return `${prefix}${Date.now().toString(36)}${idCounter.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

// ---------------------------------------------------------------- OpenAI

const OPENAI_ERROR_TYPES: Record<
  number,
  { type: string; code: string | null }
> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: {
    type: 'invalid_request_error',
    code: 'unsupported_country_region_territory',
  },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

function openAiError(res: ServerResponse, reply: FakeErrorReply): void {
  const kind = OPENAI_ERROR_TYPES[reply.status] ?? {
    type: 'server_error',
    code: null,
  };
  sendJson(res, reply.status, {
    error: {
      message: reply.message,
      type: kind.type,
      param: null,
      code: kind.code,
    },
  });
}

async function answerOpenAi(
  req: FakeRecordedRequest,
  reply: FakeReply,
  res: ServerResponse,
): Promise<void> {
  if (isErrorReply(reply)) return openAiError(res, reply);

  const id = randomId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const model = req.model || 'gpt-fake';
  const usage = reply.usage ?? DEFAULT_USAGE;
  const usageBody = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
  const calls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? randomId('call_'),
    name: call.name,
    args: argumentsString(call),
  }));
  const text = reply.text ?? [];
  const finishReason =
    reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop');

  if (!req.stream) {
    const content = text.join('');
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: content || (calls.length ? null : ''),
            refusal: null,
            ...(calls.length
              ? {
                  tool_calls: calls.map((c) => ({
                    id: c.id,
                    type: 'function',
                    function: { name: c.name, arguments: c.args },
                  })),
                }
              : {}),
          },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage: usageBody,
    });
    return;
  }

  const includeUsage = req.body?.stream_options?.include_usage === true;
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
  ) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;

  // The scripted pieces (counted by `cutAfter`): text deltas, then each call's header and argument fragments.
  const pieces: string[] = text.map((t) => chunk({ content: t }));
  calls.forEach((call, index) => {
    pieces.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const fragment of splitInPieces(call.args, 3)) {
      pieces.push(
        chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
      );
    }
  });

  startSse(res);
  const writer = new ChunkWriter(res);
  await writer.write(chunk({ role: 'assistant', content: '', refusal: null }));
  for (let i = 0; i < pieces.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter)
      return writer.cut();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    await writer.write(pieces[i]);
  }
  if (reply.cutAfter !== undefined && reply.cutAfter <= pieces.length)
    return writer.cut();
  await writer.sleep(reply.chunkDelayMs ?? 0);
  if (writer.gone) return;
  await writer.write(chunk({}, finishReason));
  if (includeUsage) {
    await writer.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage: usageBody })}\n\n`,
    );
  }
  await writer.write('data: [DONE]\n\n');
  res.end();
}

// ---------------------------------------------------------------- Gemini

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function geminiError(res: ServerResponse, reply: FakeErrorReply): void {
  sendJson(res, reply.status, {
    error: {
      code: reply.status,
      message: reply.message,
      status: GEMINI_STATUS[reply.status] ?? 'UNKNOWN',
    },
  });
}

interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown>; id?: string };
}

async function answerGemini(
  req: FakeRecordedRequest,
  reply: FakeReply,
  res: ServerResponse,
): Promise<void> {
  if (isErrorReply(reply)) return geminiError(res, reply);

  const usage = reply.usage ?? DEFAULT_USAGE;
  const modelVersion = req.model || 'gemini-fake';
  const responseId = randomId('resp-');
  const finishReason = reply.finishReason ?? 'STOP';
  const usageMetadata = (final: boolean) => ({
    promptTokenCount: usage.promptTokens,
    ...(final ? { candidatesTokenCount: usage.completionTokens } : {}),
    totalTokenCount: usage.promptTokens + (final ? usage.completionTokens : 0),
  });
  const functionParts: GeminiPart[] = (reply.toolCalls ?? []).map((call) => ({
    functionCall: {
      name: call.name,
      args: argumentsObject(call),
      ...(call.id ? { id: call.id } : {}),
    },
  }));
  const textParts: GeminiPart[] = (reply.text ?? []).map((text) => ({ text }));
  const body = (parts: GeminiPart[], final: boolean) => ({
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(final ? { finishReason } : {}),
        index: 0,
      },
    ],
    usageMetadata: usageMetadata(final),
    modelVersion,
    responseId,
  });

  if (!req.stream) {
    const merged: GeminiPart[] = [];
    const text = (reply.text ?? []).join('');
    if (text) merged.push({ text });
    merged.push(...functionParts);
    sendJson(res, 200, body(merged, true));
    return;
  }

  // The scripted pieces: one chunk per text piece, then all function calls in one chunk (as Gemini does).
  const chunks: GeminiPart[][] = textParts.map((part) => [part]);
  if (functionParts.length) chunks.push(functionParts);
  if (!chunks.length) chunks.push([{ text: '' }]);

  startSse(res);
  const writer = new ChunkWriter(res);
  for (let i = 0; i < chunks.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter)
      return writer.cut();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    const final = i === chunks.length - 1 && reply.cutAfter === undefined;
    await writer.write(
      `data: ${JSON.stringify(body(chunks[i], final))}\r\n\r\n`,
    );
  }
  if (reply.cutAfter !== undefined) return writer.cut();
  res.end();
}

// ---------------------------------------------------------------- Images

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A real RGB PNG of `width`×`height` filled with `rgb` (decodable by any viewer). */
export function makePng(
  width: number,
  height: number,
  rgb: [number, number, number] = [200, 60, 30],
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type RGB
  const row = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(Array.from({ length: width }, () => rgb).flat()),
  ]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The default image reply: a 4×3 PNG. */
export const FAKE_PNG = makePng(4, 3);

/** Waits `ms`, or less when the client went away. */
function pause(res: ServerResponse, ms: number | undefined): Promise<void> {
  if (!ms || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done() {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
  });
}

function clientGone(res: ServerResponse): boolean {
  return res.destroyed || !res.socket || res.socket.destroyed;
}

async function answerOpenAiImage(
  reply: FakeImageReply | FakeImageErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return openAiError(res, reply);
  const image = reply.image ?? FAKE_PNG;
  sendJson(res, 200, {
    created: Math.floor(Date.now() / 1000),
    data: reply.noImage ? [] : [{ b64_json: image.toString('base64') }],
    usage: { input_tokens: 10, output_tokens: 20, total_tokens: 30 },
  });
}

async function answerGeminiImage(
  req: FakeRecordedRequest,
  reply: FakeImageReply | FakeImageErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return geminiError(res, reply);
  const parts: Array<Record<string, unknown>> = [];
  if (reply.text) parts.push({ text: reply.text });
  if (!reply.noImage) {
    parts.push({
      inlineData: {
        mimeType: reply.mimeType ?? 'image/png',
        data: (reply.image ?? FAKE_PNG).toString('base64'),
      },
    });
  }
  sendJson(res, 200, {
    candidates: [
      {
        content: { parts, role: 'model' },
        finishReason: reply.finishReason ?? 'STOP',
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: 10,
      candidatesTokenCount: 20,
      totalTokenCount: 30,
    },
    modelVersion: req.model || 'gemini-fake-image',
    responseId: randomId('resp-'),
  });
}

/** A `multipart/form-data` body: text fields and file parts. */
function parseMultipart(
  raw: Buffer,
  contentType: string | undefined,
): { fields: Record<string, string>; files: FakeUploadedFile[] } | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? '');
  if (!contentType?.startsWith('multipart/form-data') || !boundary) return null;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const fields: Record<string, string> = {};
  const files: FakeUploadedFile[] = [];
  let start = raw.indexOf(delimiter);
  while (start >= 0) {
    const next = raw.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    // Between "--boundary\r\n" and "\r\n--boundary".
    const part = raw.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = part.subarray(0, split).toString('utf8');
      const data = part.subarray(split + 4);
      const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      if (filename !== undefined) {
        files.push({
          field: name,
          filename,
          contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? '',
          data: Buffer.from(data),
        });
      } else {
        fields[name] = data.toString('utf8');
      }
    }
    start = next;
  }
  return { fields, files };
}

function wantsImage(body: unknown): boolean {
  const modalities = (
    body as { generationConfig?: { responseModalities?: unknown } } | undefined
  )?.generationConfig?.responseModalities;
  return (
    Array.isArray(modalities) &&
    modalities.some((m) => String(m).toUpperCase() === 'IMAGE')
  );
}

// ---------------------------------------------------------------- server

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const GEMINI_ROUTE =
  /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const openai = new ScriptedProvider<FakeReply>();
  const gemini = new ScriptedProvider<FakeReply>();
  const openaiImages = new ScriptedProvider<
    FakeImageReply | FakeImageErrorReply
  >({});
  const geminiImages = new ScriptedProvider<
    FakeImageReply | FakeImageErrorReply
  >({});
  const sockets = new Set<Socket>();

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rawBytes = await readBody(req);
    const multipart = parseMultipart(rawBytes, header(req, 'content-type'));
    const raw = multipart ? '' : rawBytes.toString('utf8');
    let body: unknown = multipart?.fields;
    try {
      if (!multipart) body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const record = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers: { ...req.headers },
      body,
      ...(multipart ? { files: multipart.files } : {}),
    };

    if (
      req.method === 'POST' &&
      (url.pathname === '/v1/images/generations' ||
        url.pathname === '/v1/images/edits')
    ) {
      const auth = header(req, 'authorization');
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: auth?.startsWith('Bearer ')
          ? auth.slice('Bearer '.length)
          : null,
        model: String((body as { model?: unknown } | undefined)?.model ?? ''),
        stream: false,
      };
      openaiImages.requests.push(request);
      return answerOpenAiImage(openaiImages.next(request), res);
    }

    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      const auth = header(req, 'authorization');
      const typed = body as { model?: string; stream?: boolean } | undefined;
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: auth?.startsWith('Bearer ')
          ? auth.slice('Bearer '.length)
          : null,
        model: typed?.model ?? '',
        stream: typed?.stream === true,
      };
      openai.requests.push(request);
      return answerOpenAi(request, openai.next(request), res);
    }

    const match =
      req.method === 'POST' ? GEMINI_ROUTE.exec(url.pathname) : null;
    if (match) {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: header(req, 'x-goog-api-key') ?? url.searchParams.get('key'),
        model: decodeURIComponent(match[1]),
        stream: match[2] === 'streamGenerateContent',
      };
      if (!request.stream && wantsImage(body)) {
        geminiImages.requests.push(request);
        return answerGeminiImage(request, geminiImages.next(request), res);
      }
      gemini.requests.push(request);
      return answerGemini(request, gemini.next(request), res);
    }

    sendJson(res, 404, {
      error: {
        code: 404,
        message: `fake-llm: no route for ${req.method} ${url.pathname}`,
      },
    });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { code: 500, message: String(error) } });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  return {
    url: base,
    openaiBaseUrl: `${base}/v1`,
    geminiBaseUrl: base,
    openai,
    gemini,
    openaiImages,
    geminiImages,
    reset() {
      openai.reset();
      gemini.reset();
      openaiImages.reset();
      geminiImages.reset();
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}
