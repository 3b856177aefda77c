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
  braveApiKey: string | null;
  /** IANA zone, e.g. `Europe/Paris`. */
  timezone: string;
  updatedAt: string | null;
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
  braveApiKey?: string | null;
  timezone?: string;
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
