/**
 * A local stand-in for the OpenAI and Gemini HTTP APIs, scripted per test.
 *
 * One HTTP server on 127.0.0.1 answers both wire formats:
 * - OpenAI: `POST /v1/chat/completions` (SSE `data: {chunk}` … `data: [DONE]`, or JSON when not streaming)
 * - Gemini: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and `:generateContent`
 * - Model lists: OpenAI `GET /v1/models` and Gemini `GET /v1beta/models` (`openaiModels`, `geminiModels`)
 * - Embeddings: OpenAI `POST /v1/embeddings`, Gemini `:embedContent` / `:batchEmbedContents` (`embeddings.ts`)
 * - Images: OpenAI `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart), and Gemini
 *   `:generateContent` asking for `responseModalities: ['IMAGE', …]`, each answered from its own queue
 *   (`openaiImages`, `geminiImages`) with a small real PNG by default
 *
 * This file routes requests to the queues; the wire formats are in `openai-wire.ts`,
 * `gemini-wire.ts` and `images.ts`, the scripts and recorded requests in `scripts.ts`.
 * Plain Node (no test framework imports): used by Jest specs, Playwright and benchmarks alike.
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  answerGeminiEmbeddings,
  answerOpenAiEmbeddings,
  type FakeEmbeddingErrorReply,
  type FakeEmbeddingProvider,
  type FakeEmbeddingReply,
} from './embeddings';
import { answerGemini, wantsImage } from './gemini-wire';
import { sendJson } from './http-replies';
import { answerGeminiImage, answerOpenAiImage } from './images';
import {
  answerGeminiModels,
  answerOpenAiModels,
  DEFAULT_GEMINI_MODELS,
  DEFAULT_OPENAI_MODELS,
  modelList,
  resetModelList,
  type FakeModelList,
} from './model-lists';
import { answerOpenAi } from './openai-wire';
import { readRequestBody } from './request-reader';
import {
  ScriptedProvider,
  type FakeImageErrorReply,
  type FakeImageProvider,
  type FakeImageReply,
  type FakeProvider,
  type FakeRecordedRequest,
  type FakeReply,
} from './scripts';

export { FAKE_PNG, makePng } from './images';
export {
  fakeConcepts,
  fakeEmbedding,
  type FakeEmbeddingProvider,
  type FakeEmbeddingReply,
  type FakeEmbeddingReplyScript,
} from './embeddings';
export {
  DEFAULT_GEMINI_MODELS,
  DEFAULT_OPENAI_MODELS,
  type FakeModelList,
} from './model-lists';
export type {
  FakeErrorReply,
  FakeImageErrorReply,
  FakeImageProvider,
  FakeImageReply,
  FakeImageReplyScript,
  FakeModelReply,
  FakeProvider,
  FakeRecordedRequest,
  FakeReply,
  FakeReplyScript,
  FakeToolCall,
  FakeUploadedFile,
  FakeUsage,
} from './scripts';

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
  /** OpenAI `GET /v1/models` (also what an OpenAI-compatible endpoint at `openaiBaseUrl` lists). */
  openaiModels: FakeModelList;
  /** Gemini `GET /v1beta/models`. */
  geminiModels: FakeModelList;
  /** OpenAI `POST /v1/embeddings` (deterministic vectors; see `embeddings.ts`). */
  openaiEmbeddings: FakeEmbeddingProvider;
  /** Gemini `:embedContent` and `:batchEmbedContents`. */
  geminiEmbeddings: FakeEmbeddingProvider;
  /** Resets every provider. */
  reset(): void;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function bearerKey(req: IncomingMessage): string | null {
  const auth = header(req, 'authorization');
  return auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : null;
}

const OPENAI_IMAGE_ROUTES = new Set([
  '/v1/images/generations',
  '/v1/images/edits',
]);
const GEMINI_ROUTE =
  /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;
const GEMINI_EMBED_ROUTE =
  /^\/v1beta\/models\/([^/:]+):(embedContent|batchEmbedContents)$/;

export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const openai = new ScriptedProvider<FakeReply>();
  const gemini = new ScriptedProvider<FakeReply>();
  const openaiImages = new ScriptedProvider<
    FakeImageReply | FakeImageErrorReply
  >({});
  const geminiImages = new ScriptedProvider<
    FakeImageReply | FakeImageErrorReply
  >({});
  const openaiEmbeddings = new ScriptedProvider<
    FakeEmbeddingReply | FakeEmbeddingErrorReply
  >({});
  const geminiEmbeddings = new ScriptedProvider<
    FakeEmbeddingReply | FakeEmbeddingErrorReply
  >({});
  const openaiModels = modelList(DEFAULT_OPENAI_MODELS);
  const geminiModels = modelList(DEFAULT_GEMINI_MODELS);
  const sockets = new Set<Socket>();

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const { body, files } = await readRequestBody(req);
    const record = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers: { ...req.headers },
      body,
      ...(files ? { files } : {}),
    };
    const typed = body as
      | { model?: unknown; stream?: unknown }
      | Record<string, string>
      | undefined;

    if (req.method === 'GET' && url.pathname === '/v1/models')
      return answerOpenAiModels(openaiModels, bearerKey(req), res);
    if (req.method === 'GET' && url.pathname === '/v1beta/models')
      return answerGeminiModels(
        geminiModels,
        header(req, 'x-goog-api-key') ?? url.searchParams.get('key'),
        record.query,
        res,
      );

    if (req.method === 'POST' && OPENAI_IMAGE_ROUTES.has(url.pathname)) {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: bearerKey(req),
        model: String(typed?.model ?? ''),
        stream: false,
      };
      return answerOpenAiImage(openaiImages.answer(request), res);
    }

    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: bearerKey(req),
        model: String(typed?.model ?? ''),
        stream: false,
      };
      return answerOpenAiEmbeddings(
        request,
        openaiEmbeddings.answer(request),
        res,
      );
    }
    const embed =
      req.method === 'POST' ? GEMINI_EMBED_ROUTE.exec(url.pathname) : null;
    if (embed) {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: header(req, 'x-goog-api-key') ?? url.searchParams.get('key'),
        model: decodeURIComponent(embed[1]),
        stream: false,
      };
      return answerGeminiEmbeddings(
        request,
        embed[2] === 'batchEmbedContents',
        geminiEmbeddings.answer(request),
        res,
      );
    }

    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      const request: FakeRecordedRequest = {
        ...record,
        apiKey: bearerKey(req),
        model: typeof typed?.model === 'string' ? typed.model : '',
        stream: typed?.stream === true,
      };
      return answerOpenAi(request, openai.answer(request), res);
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
      if (!request.stream && wantsImage(body))
        return answerGeminiImage(request, geminiImages.answer(request), res);
      return answerGemini(request, gemini.answer(request), res);
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
    openaiModels,
    geminiModels,
    openaiEmbeddings,
    geminiEmbeddings,
    reset() {
      openaiEmbeddings.reset();
      geminiEmbeddings.reset();
      openai.reset();
      gemini.reset();
      openaiImages.reset();
      geminiImages.reset();
      resetModelList(openaiModels, DEFAULT_OPENAI_MODELS);
      resetModelList(geminiModels, DEFAULT_GEMINI_MODELS);
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}
