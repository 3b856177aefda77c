/**
 * A local stand-in for the OpenAI and Gemini HTTP APIs, scripted per test.
 *
 * One HTTP server on 127.0.0.1 answers both wire formats:
 * - OpenAI: `POST /v1/chat/completions` (SSE `data: {chunk}` … `data: [DONE]`, or JSON when not streaming)
 * - Gemini: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and `:generateContent`
 *
 * Plain Node (no test framework imports): used by Jest specs, Playwright and benchmarks alike.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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
export type FakeReplyScript = FakeReply | ((request: FakeRecordedRequest) => FakeReply);

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
  /** Resets both providers. */
  reset(): void;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

const DEFAULT_USAGE: FakeUsage = { promptTokens: 10, completionTokens: 5 };

function isErrorReply(reply: FakeReply): reply is FakeErrorReply {
  return typeof (reply as FakeErrorReply).status === 'number';
}

class ScriptedProvider implements FakeProvider {
  fallback: FakeReplyScript | null = null;
  readonly requests: FakeRecordedRequest[] = [];
  private readonly queue: FakeReplyScript[] = [];

  enqueue(...replies: FakeReplyScript[]): void {
    this.queue.push(...replies);
  }

  get pending(): number {
    return this.queue.length;
  }

  reset(): void {
    this.queue.length = 0;
    this.fallback = null;
    this.requests.length = 0;
  }

  next(request: FakeRecordedRequest): FakeReply {
    const script = this.queue.shift() ?? this.fallback;
    if (script === null) return { status: 500, message: 'fake-llm: no scripted reply for this request' };
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
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Splits a string into up to `n` pieces (how the real API streams tool arguments). */
function splitInPieces(value: string, n: number): string[] {
  if (value.length <= 1) return [value];
  const size = Math.ceil(value.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size) pieces.push(value.slice(i, i + size));
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

const OPENAI_ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

function openAiError(res: ServerResponse, reply: FakeErrorReply): void {
  const kind = OPENAI_ERROR_TYPES[reply.status] ?? { type: 'server_error', code: null };
  sendJson(res, reply.status, { error: { message: reply.message, type: kind.type, param: null, code: kind.code } });
}

async function answerOpenAi(req: FakeRecordedRequest, reply: FakeReply, res: ServerResponse): Promise<void> {
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
  const finishReason = reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop');

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
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
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
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const fragment of splitInPieces(call.args, 3)) {
      pieces.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });

  startSse(res);
  const writer = new ChunkWriter(res);
  await writer.write(chunk({ role: 'assistant', content: '', refusal: null }));
  for (let i = 0; i < pieces.length; i++) {
    if (reply.cutAfter !== undefined && i >= reply.cutAfter) return writer.cut();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    await writer.write(pieces[i]);
  }
  if (reply.cutAfter !== undefined && reply.cutAfter <= pieces.length) return writer.cut();
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
    error: { code: reply.status, message: reply.message, status: GEMINI_STATUS[reply.status] ?? 'UNKNOWN' },
  });
}

interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown>; id?: string };
}

async function answerGemini(req: FakeRecordedRequest, reply: FakeReply, res: ServerResponse): Promise<void> {
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
    functionCall: { name: call.name, args: argumentsObject(call), ...(call.id ? { id: call.id } : {}) },
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
    if (reply.cutAfter !== undefined && i >= reply.cutAfter) return writer.cut();
    if (i > 0) await writer.sleep(reply.chunkDelayMs ?? 0);
    if (writer.gone) return;
    const final = i === chunks.length - 1 && reply.cutAfter === undefined;
    await writer.write(`data: ${JSON.stringify(body(chunks[i], final))}\r\n\r\n`);
  }
  if (reply.cutAfter !== undefined) return writer.cut();
  res.end();
}

// ---------------------------------------------------------------- server

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const GEMINI_ROUTE = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const openai = new ScriptedProvider();
  const gemini = new ScriptedProvider();
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const record = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers: { ...req.headers },
      body,
    };

    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      const auth = header(req, 'authorization');
      const typed = body as { model?: string; stream?: boolean } | undefined;
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : null,
        model: typed?.model ?? '',
        stream: typed?.stream === true,
      };
      openai.requests.push(request);
      return answerOpenAi(request, openai.next(request), res);
    }

    const match = req.method === 'POST' ? GEMINI_ROUTE.exec(url.pathname) : null;
    if (match) {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: header(req, 'x-goog-api-key') ?? url.searchParams.get('key'),
        model: decodeURIComponent(match[1]),
        stream: match[2] === 'streamGenerateContent',
      };
      gemini.requests.push(request);
      return answerGemini(request, gemini.next(request), res);
    }

    sendJson(res, 404, { error: { code: 404, message: `fake-llm: no route for ${req.method} ${url.pathname}` } });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 500, message: String(error) } });
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
    reset() {
      openai.reset();
      gemini.reset();
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}
