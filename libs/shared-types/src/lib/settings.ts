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
  /** Tools the owner switched off on the Tools page: never offered, never run. */
  disabledTools: string[];
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
  /** Names of registered tools to switch off (the meta tools cannot be); replaces the list. */
  disabledTools?: string[];
}

export type ModelProvider = 'gemini' | 'openai' | 'openai-compatible';
