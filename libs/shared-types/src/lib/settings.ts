import type { BudgetCaps, ModelPrice, OutputLimits } from './budget';

/** The prefix of a masked secret in every response: `••••` and the secret's last 4 characters. */
export const SECRET_MASK_PREFIX = '••••';

/** An OpenAI-compatible endpoint (Ollama, vLLM, LM Studio…). Model ids `<name>/<model>` route to it. */
export interface OpenAiCompatibleEndpoint {
  /** Letters, digits, `-` and `_`; unique; the part before `/` in a model id. */
  name: string;
  /** e.g. `http://127.0.0.1:11434/v1` */
  baseUrl: string;
  /** Masked in responses; `null` when the endpoint needs no key. */
  apiKey: string | null;
}

/** `GET /api/settings`: every secret masked (`••••abcd`) or `null` when unset. */
export interface AppSettingsView {
  geminiApiKey: string | null;
  openaiApiKey: string | null;
  openaiCompatible: OpenAiCompatibleEndpoint[];
  /** Model id for chats: `gemini-*`, `gpt-*` / `o*`, or `<endpointName>/<model>`. */
  primaryModel: string | null;
  imageModel: string | null;
  /** The speaking model of voice calls (OpenAI Realtime); null: `gpt-realtime`. */
  realtimeModel: string | null;
  /** The voice Metatron speaks with in calls (`marin`, `cedar`, `alloy`…); null: `marin`. */
  realtimeVoice: string | null;
  /** The owner's own Telegram chat with the bot (its chat id): spend notices go there; null: none. */
  telegramOwnerChatId: string | null;
  braveApiKey: string | null;
  /** The Telegram bot token (masked); long polling runs while it is set. */
  telegramBotToken: string | null;
  /** The Bot API server, `https://api.telegram.org` unless a self-hosted one is set. */
  telegramApiRoot: string;
  /** IANA zone, e.g. `Europe/Paris`. */
  timezone: string;
  /** `url_fetch` may reach these exact `host:port` entries although they are private (a home server). */
  urlFetchAllowHosts: string[];
  /** Credentials `url_fetch` adds under a URL prefix; `value` masked. */
  authProfiles: AuthProfile[];
  /** Tools the owner switched off on the Tools page: never offered, never run. */
  disabledTools: string[];
  /** Attended turns too wait for the owner's approval before they send or delete (on for new installs). */
  alwaysConfirm?: boolean;
  /** The owner's prices (USD per MTok); they win over the shipped ones. */
  modelPrices: ModelPrice[];
  /** The prices shipped with the app, for the console to show. */
  defaultModelPrices: ModelPrice[];
  /** Spend caps in USD; `null`: no cap. */
  budget: BudgetCaps;
  /** The output limit every model call carries, per source. */
  outputLimits: OutputLimits;
  updatedAt: string | null;
}

/**
 * A credential header `url_fetch` sends for the model, which only names the `id`:
 * `header: value` goes only with requests whose URL lies under `urlPrefix`
 * (same origin, path starting with the prefix's), redirects included.
 */
export interface AuthProfile {
  /** Letters, digits, `-` and `_`: what the model passes as `auth_profile`. */
  id: string;
  /** e.g. `https://api.github.com/` */
  urlPrefix: string;
  /** e.g. `Authorization` */
  header: string;
  /** Masked in responses (`••••abcd`). */
  value: string | null;
}

/** An auth profile as PATCH takes it: an omitted or masked `value` keeps the stored one of the same id and prefix. */
export interface AuthProfileInput {
  id: string;
  urlPrefix: string;
  header: string;
  value?: string | null;
}

/** An endpoint as PATCH takes it: an omitted or masked `apiKey` keeps the key stored under the same name. */
export interface OpenAiCompatibleEndpointInput {
  name: string;
  baseUrl: string;
  apiKey?: string | null;
}

/**
 * `PATCH /api/settings`: every field optional. For a secret, a string sets it,
 * `null` or `''` clears it, and the masked value (as GET returned it) leaves it unchanged.
 */
export interface UpdateAppSettingsRequest {
  geminiApiKey?: string | null;
  openaiApiKey?: string | null;
  openaiCompatible?: OpenAiCompatibleEndpointInput[];
  primaryModel?: string | null;
  imageModel?: string | null;
  realtimeModel?: string | null;
  realtimeVoice?: string | null;
  /** A Telegram chat id (`123456789`, or a number); `null` or `""`: none. */
  telegramOwnerChatId?: string | number | null;
  braveApiKey?: string | null;
  telegramBotToken?: string | null;
  /** `null` or `''`: back to `https://api.telegram.org`. Changing it needs the token again. */
  telegramApiRoot?: string | null;
  timezone?: string;
  /** Replaces the list; each entry `host:port`. */
  urlFetchAllowHosts?: string[];
  /** Replaces the list. */
  authProfiles?: AuthProfileInput[];
  /** Names of registered tools to switch off (the meta tools cannot be); replaces the list. */
  disabledTools?: string[];
  alwaysConfirm?: boolean;
  /** Replaces the owner's price list (USD per MTok, each ≥ 0 and ≤ 10,000). */
  modelPrices?: ModelPrice[];
  /** Caps to change (omitted ones kept); `null`: no cap. Each ≥ 0 and ≤ 10,000. */
  budget?: Partial<BudgetCaps>;
  /** Output limits to change (omitted sources kept). */
  outputLimits?: Partial<OutputLimits>;
}

export const MODEL_PROVIDERS = [
  'gemini',
  'openai',
  'openai-compatible',
] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A model a configured provider offers, as an id the settings and chats accept. */
export interface ModelOption {
  /** `gemini-…`, `gpt-…` / `o…`, or `<endpointName>/<model>`. */
  id: string;
  provider: ModelProvider;
}

/** `GET /api/settings/models`: the models of every configured provider. */
export interface ModelListResponse {
  models: ModelOption[];
  /** Providers that could not be asked, in plain words (their models are missing from `models`). */
  problems: Array<{ provider: ModelProvider; name: string; error: string }>;
}

/**
 * `POST /api/settings/test`: either a provider (`gemini` / `openai`) with the key to try (omitted or masked:
 * the stored key), or an OpenAI-compatible endpoint (an omitted or masked key: the one stored for the same
 * name and base URL).
 */
export interface ConnectionTestRequest {
  provider?: 'gemini' | 'openai';
  apiKey?: string | null;
  endpoint?: OpenAiCompatibleEndpointInput;
}

/** The answer of `POST /api/settings/test`: the models offered, or why not in plain words (never the key). */
export type ConnectionTestResponse =
  | { ok: true; models: ModelOption[] }
  | { ok: false; error: string };
