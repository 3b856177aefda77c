/** The providers' model-list routes: OpenAI `GET /v1/models` and Gemini `GET /v1beta/models`. */
import type { ServerResponse } from 'node:http';
import { sendJson } from './http-replies';

/** What one provider's model list answers; tests change `ids` and `key` freely. */
export interface FakeModelList {
  /** Model ids as the provider names them (Gemini without the `models/` prefix). */
  ids: string[];
  /** When set, a request with another key is refused the provider's way (OpenAI 401, Gemini 400 API_KEY_INVALID). */
  key: string | null;
  /** Keys of the list requests received, oldest first. */
  requests: Array<{ apiKey: string | null; query: Record<string, string> }>;
}

export const DEFAULT_OPENAI_MODELS = [
  'gpt-4.1',
  'gpt-4.1-mini',
  'o4-mini',
  'text-embedding-3-small',
  'whisper-1',
];
/** `text-embedding-004` only embeds, `gemini-2.5-flash-image` makes images. */
export const DEFAULT_GEMINI_MODELS = [
  'gemini-2.5-flash',
  'gemini-2.5-pro',
  'text-embedding-004',
  'gemini-2.5-flash-image',
];

export function modelList(ids: string[]): FakeModelList {
  return { ids: [...ids], key: null, requests: [] };
}

export function resetModelList(list: FakeModelList, ids: string[]): void {
  list.ids = [...ids];
  list.key = null;
  list.requests = [];
}

/** `GET /v1/models`: `{ object: 'list', data: [{ id, object: 'model', created, owned_by }] }`. */
export function answerOpenAiModels(
  list: FakeModelList,
  apiKey: string | null,
  res: ServerResponse,
): void {
  list.requests.push({ apiKey, query: {} });
  if (list.key !== null && apiKey !== list.key) {
    // The real message quotes part of the key; a client must not pass it on.
    const shown = apiKey ? `${apiKey.slice(0, 6)}***${apiKey.slice(-4)}` : '';
    sendJson(res, 401, {
      error: {
        message: `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    return;
  }
  sendJson(res, 200, {
    object: 'list',
    data: list.ids.map((id) => ({
      id,
      object: 'model',
      created: 1_700_000_000,
      owned_by: 'system',
    })),
  });
}

/** `GET /v1beta/models`: `{ models: [{ name: 'models/<id>', supportedGenerationMethods, … }] }`, paged by `pageSize`. */
export function answerGeminiModels(
  list: FakeModelList,
  apiKey: string | null,
  query: Record<string, string>,
  res: ServerResponse,
): void {
  list.requests.push({ apiKey, query });
  if (list.key !== null && apiKey !== list.key) {
    sendJson(res, 400, {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
          },
        ],
      },
    });
    return;
  }
  const size = Math.max(1, Number(query['pageSize']) || 50);
  const start = Number(query['pageToken'] ?? '0') || 0;
  const page = list.ids.slice(start, start + size);
  const next = start + size < list.ids.length ? String(start + size) : null;
  sendJson(res, 200, {
    models: page.map((id) => ({
      name: `models/${id}`,
      version: '001',
      displayName: id,
      inputTokenLimit: 1_048_576,
      outputTokenLimit: 65_536,
      supportedGenerationMethods: id.includes('embedding')
        ? ['embedContent']
        : ['generateContent', 'countTokens'],
    })),
    ...(next ? { nextPageToken: next } : {}),
  });
}
