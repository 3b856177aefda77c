import { Injectable } from '@nestjs/common';
import type {
  ConnectionTestRequest,
  ConnectionTestResponse,
  ModelListResponse,
  ModelOption,
  ModelProvider,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import {
  cleanProviderMessage,
  hostOf,
  isNetworkFailure,
  networkReason,
} from '../llm/adapters/adapter-support';
import { routeModel } from './model-route';
import { isMaskedSecret } from './secret-mask';
import { SettingsService, sameEndpointAddress } from './settings.service';

/** How long one provider may take to list its models. */
export const MODEL_LIST_TIMEOUT_MS = 10_000;
/** `GET /api/settings/models` asks the providers again after this long (or when the settings change). */
const CATALOG_TTL_MS = 60_000;
/** Gemini pages its list; a few pages hold every model it offers. */
const MAX_GEMINI_PAGES = 5;
/** At most this many models are kept from one provider (local servers may hold very many). */
const MAX_MODELS_PER_PROVIDER = 500;

const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1';
const DEFAULT_GEMINI_URL = 'https://generativelanguage.googleapis.com';

/** OpenAI lists every model of the account; these are not chat models. */
const OPENAI_NOT_CHAT =
  /(embedding|tts|transcribe|whisper|dall-e|image|audio|realtime|moderation)/;
/** Neither are these Gemini ones (the image models are for the image setting, not for chats). */
const GEMINI_NOT_CHAT = /(embedding|tts|image|aqa|native-audio|live)/;

/** One provider to ask: where, with which key, and how its model ids are written. */
interface ProviderTarget {
  provider: ModelProvider;
  /** "Gemini", "OpenAI", or the endpoint's name. */
  name: string;
  baseUrl: string;
  apiKey: string | null;
  /** OpenAI-compatible endpoints: the `<name>/` in front of each model id. */
  endpoint?: string;
}

/** A provider's answer that is not a model list, in words for the owner. */
class ListingFailure extends Error {}

/**
 * The models the configured providers offer (`GET /api/settings/models`), and a
 * connection test for a key or an endpoint before it is saved
 * (`POST /api/settings/test`). Each provider's own list route: OpenAI and
 * compatible servers `GET <base>/models`, Gemini `GET <base>/v1beta/models`,
 * through the same base-URL variables as the chat adapters. Failures are
 * plain words without the key.
 */
@Injectable()
export class ModelCatalog {
  private cached: {
    at: number;
    settingsAt: string | null;
    list: ModelListResponse;
  } | null = null;

  constructor(
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  async configured(): Promise<ModelListResponse> {
    const settings = await this.settings.get();
    const settingsAt = settings.updatedAt?.toISOString() ?? null;
    const now = this.clock.now().getTime();
    if (
      this.cached &&
      this.cached.settingsAt === settingsAt &&
      now - this.cached.at < CATALOG_TTL_MS
    )
      return this.cached.list;

    const targets: ProviderTarget[] = [];
    if (settings.geminiApiKey)
      targets.push(geminiTarget(settings.geminiApiKey));
    if (settings.openaiApiKey)
      targets.push(openAiTarget(settings.openaiApiKey));
    for (const endpoint of settings.openaiCompatible)
      targets.push(
        endpointTarget(endpoint.name, endpoint.baseUrl, endpoint.apiKey),
      );

    const answers = await Promise.all(
      targets.map(async (target) => {
        try {
          return { target, models: await listModels(target) };
        } catch (error) {
          return { target, error: failureText(target, error) };
        }
      }),
    );
    const list: ModelListResponse = {
      models: answers.flatMap((a) => a.models ?? []),
      problems: answers.flatMap((a) =>
        a.error
          ? [
              {
                provider: a.target.provider,
                name: a.target.name,
                error: a.error,
              },
            ]
          : [],
      ),
    };
    this.cached = { at: now, settingsAt, list };
    return list;
  }

  /** Tries a key or an endpoint; the request was validated (exactly one of provider / endpoint). */
  async test(request: ConnectionTestRequest): Promise<ConnectionTestResponse> {
    const settings = await this.settings.get();
    let target: ProviderTarget;
    if (request.endpoint) {
      const { name, apiKey } = request.endpoint;
      const baseUrl = request.endpoint.baseUrl.trim().replace(/\/+$/, '');
      let key: string | null = null;
      if (
        typeof apiKey === 'string' &&
        apiKey.trim() &&
        !isMaskedSecret(apiKey.trim())
      )
        key = apiKey.trim();
      else if (typeof apiKey === 'string' && isMaskedSecret(apiKey.trim())) {
        // A stored key goes only to the address it was entered for.
        const stored = settings.openaiCompatible.find((e) => e.name === name);
        if (!stored?.apiKey || !sameEndpointAddress(stored.baseUrl, baseUrl))
          return {
            ok: false,
            error: `No key is stored for '${name}' at ${baseUrl}: enter the key itself.`,
          };
        key = stored.apiKey;
      }
      target = endpointTarget(name, baseUrl, key);
    } else {
      const gemini = request.provider === 'gemini';
      const given = request.apiKey?.trim();
      const key =
        given && !isMaskedSecret(given)
          ? given
          : gemini
            ? settings.geminiApiKey
            : settings.openaiApiKey;
      if (!key)
        return {
          ok: false,
          error: `Enter ${gemini ? 'a Gemini' : 'an OpenAI'} API key first.`,
        };
      target = gemini ? geminiTarget(key) : openAiTarget(key);
    }
    try {
      const models = await listModels(target);
      return { ok: true, models };
    } catch (error) {
      return { ok: false, error: failureText(target, error) };
    }
  }
}

function geminiTarget(apiKey: string): ProviderTarget {
  return {
    provider: 'gemini',
    name: 'Gemini',
    baseUrl:
      process.env['GOOGLE_GEMINI_BASE_URL']?.trim() || DEFAULT_GEMINI_URL,
    apiKey,
  };
}

function openAiTarget(apiKey: string): ProviderTarget {
  return {
    provider: 'openai',
    name: 'OpenAI',
    baseUrl: process.env['OPENAI_BASE_URL']?.trim() || DEFAULT_OPENAI_URL,
    apiKey,
  };
}

function endpointTarget(
  name: string,
  baseUrl: string,
  apiKey: string | null,
): ProviderTarget {
  return {
    provider: 'openai-compatible',
    name,
    baseUrl,
    apiKey,
    endpoint: name,
  };
}

async function listModels(target: ProviderTarget): Promise<ModelOption[]> {
  const ids =
    target.provider === 'gemini'
      ? await listGemini(target)
      : await listOpenAi(target);
  const seen = new Set<string>();
  const models: ModelOption[] = [];
  for (const raw of ids) {
    const id = target.endpoint ? `${target.endpoint}/${raw}` : raw;
    const route = routeModel(id);
    if (!route || route.provider !== target.provider || seen.has(id)) continue;
    seen.add(id);
    models.push({ id, provider: target.provider });
    if (models.length >= MAX_MODELS_PER_PROVIDER) break;
  }
  return models.sort((a, b) => a.id.localeCompare(b.id));
}

async function listOpenAi(target: ProviderTarget): Promise<string[]> {
  const url = `${target.baseUrl.replace(/\/+$/, '')}/models`;
  const body = await getJson(target, url, {
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
  });
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw notAModelList(target);
  const ids = data.flatMap((item: unknown) => {
    const id = (item as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? [id] : [];
  });
  return target.provider === 'openai'
    ? ids.filter((id) => !OPENAI_NOT_CHAT.test(id))
    : ids;
}

async function listGemini(target: ProviderTarget): Promise<string[]> {
  const ids: string[] = [];
  let pageToken: string | null = null;
  for (let page = 0; page < MAX_GEMINI_PAGES; page++) {
    const url = new URL(`${target.baseUrl.replace(/\/+$/, '')}/v1beta/models`);
    url.searchParams.set('pageSize', '1000');
    if (pageToken) url.searchParams.set('pageToken', pageToken);
    const body = (await getJson(target, url.href, {
      'x-goog-api-key': target.apiKey ?? '',
    })) as { models?: unknown; nextPageToken?: unknown } | null;
    if (!body || !Array.isArray(body.models)) throw notAModelList(target);
    for (const item of body.models as unknown[]) {
      const model = item as {
        name?: unknown;
        supportedGenerationMethods?: unknown;
      } | null;
      if (typeof model?.name !== 'string') continue;
      const methods = model.supportedGenerationMethods;
      if (Array.isArray(methods) && !methods.includes('generateContent'))
        continue;
      const id = model.name.replace(/^models\//, '');
      if (!GEMINI_NOT_CHAT.test(id)) ids.push(id);
    }
    pageToken =
      typeof body.nextPageToken === 'string' && body.nextPageToken
        ? body.nextPageToken
        : null;
    if (!pageToken) break;
  }
  return ids;
}

/** GET a JSON body; an HTTP error or a body that is not JSON becomes a ListingFailure in plain words. */
async function getJson(
  target: ProviderTarget,
  url: string,
  headers: Record<string, string>,
): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: 'application/json', ...headers },
    redirect: 'error',
    signal: AbortSignal.timeout(MODEL_LIST_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    if (response.ok) throw notAModelList(target);
  }
  if (!response.ok) throw statusFailure(target, response.status, body);
  return body;
}

function statusFailure(
  target: ProviderTarget,
  status: number,
  body: unknown,
): ListingFailure {
  const error = (
    body as { error?: { message?: unknown; details?: unknown } } | null
  )?.error;
  const message = typeof error?.message === 'string' ? error.message : '';
  const keyWord = target.provider === 'openai-compatible' ? 'key' : 'API key';
  // Gemini answers a wrong key with 400 API_KEY_INVALID.
  if (
    status === 401 ||
    status === 403 ||
    (target.provider === 'gemini' &&
      status === 400 &&
      /API key not valid|API_KEY_INVALID/i.test(
        `${message} ${JSON.stringify(error?.details ?? '')}`,
      ))
  )
    return new ListingFailure(
      target.apiKey
        ? `${target.name} refused the ${keyWord} (${status}): check that it is copied whole and still active.`
        : `${target.name} asks for a key (${status}): enter one.`,
    );
  if (status === 404 && target.provider === 'openai-compatible')
    return notAModelList(target);
  if (status === 429)
    return new ListingFailure(
      `${target.name} is rate-limiting this key (429): try again in a moment.`,
    );
  if (status >= 500)
    return new ListingFailure(
      `${target.name} had a server error (${status}): try again later.`,
    );
  const detail = message ? `: ${message}` : '.';
  return new ListingFailure(
    `${target.name} refused the request (${status})${detail}`,
  );
}

function notAModelList(target: ProviderTarget): ListingFailure {
  return new ListingFailure(
    target.provider === 'openai-compatible'
      ? `${hostOf(target.baseUrl)} answered, but not as an OpenAI-compatible server (no model list at ${target.baseUrl.replace(/\/+$/, '')}/models). Check the base URL: it usually ends in /v1.`
      : `${target.name} answered with something other than its model list: check the base URL.`,
  );
}

/** Any failure of a listing, as the owner reads it: never the key, one line. */
function failureText(target: ProviderTarget, error: unknown): string {
  let text: string;
  if (error instanceof ListingFailure) text = error.message;
  else if (
    (error as { name?: unknown } | null)?.name === 'TimeoutError' ||
    (error as { name?: unknown } | null)?.name === 'AbortError'
  )
    text = `${target.name} did not answer within ${MODEL_LIST_TIMEOUT_MS / 1000} s (${hostOf(target.baseUrl)}).`;
  else if (isNetworkFailure(error) || error instanceof TypeError)
    text = `Could not reach ${target.name} at ${hostOf(target.baseUrl)}: ${networkReason(error)}.`;
  else text = `Asking ${target.name} for its models failed.`;
  return cleanProviderMessage(text, target.apiKey ?? '');
}
