import type { TokenUsage } from '@metatronos/shared-types';
import { LlmProviderError } from '../llm-adapter';
import { maskSecretOccurrences } from '../../settings/secret-occurrences';

/** What an adapter needs to word an error: the provider's name, the host it called, the key to hide. */
export interface ProviderContext {
  /** "OpenAI", "Gemini", or an OpenAI-compatible endpoint's name. */
  name: string;
  /** `host:port` of the base URL. */
  host: string;
  apiKey: string;
}

const MAX_PROVIDER_MESSAGE = 300;

/** Things that look like keys, removed from provider text even when they are not the configured key. */
const KEY_PATTERNS = [
  /sk-[A-Za-z0-9_*.-]{6,}/g,
  /AIza[0-9A-Za-z_-]{10,}/g,
  /Bearer\s+\S+/gi,
];

/** A provider's message made safe to show: no key (full or partial), one line, at most 300 characters. */
export function cleanProviderMessage(message: string, apiKey: string): string {
  let text = message;
  text = maskSecretOccurrences(text, [apiKey], '••••');
  for (const pattern of KEY_PATTERNS) text = text.replace(pattern, '••••');
  text = text.replace(/\s+/g, ' ').trim();
  if (text.length > MAX_PROVIDER_MESSAGE)
    text = `${text.slice(0, MAX_PROVIDER_MESSAGE - 1)}…`;
  return text;
}

/** `host:port` of a base URL, or the URL itself when it does not parse. */
export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

/** The error and its `cause`s, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (
    current !== undefined &&
    current !== null &&
    chain.length < 8 &&
    !chain.includes(current)
  ) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** A short reason for a failed connection ("connection refused (ECONNREFUSED)"). */
export function networkReason(error: unknown): string {
  for (const link of causeChain(error)) {
    const code = codeOf(link);
    if (code && NETWORK_CODES[code]) return `${NETWORK_CODES[code]} (${code})`;
  }
  for (const link of causeChain(error)) {
    const code = codeOf(link);
    if (code) return code;
  }
  return errorLike(causeChain(error).pop())?.message || 'connection failed';
}

/**
 * An Error from any realm (Node's fetch errors are not `instanceof Error` inside a Jest sandbox,
 * and the OpenAI runner then wraps them as `OpenAIError("TypeError: terminated")` without a cause).
 */
function errorLike(value: unknown): { name: string; message: string } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { name, message } = value as { name?: unknown; message?: unknown };
  return typeof message === 'string'
    ? { name: typeof name === 'string' ? name : 'Error', message }
    : null;
}

const NETWORK_MESSAGES =
  /^(TypeError: )?(terminated|fetch failed|other side closed)$/;

/** True when the error is a connection failure (before or during a response), not an HTTP status. */
export function isNetworkFailure(error: unknown): boolean {
  return causeChain(error).some((link) => {
    const code = codeOf(link);
    if (code && (NETWORK_CODES[code] || code.startsWith('UND_ERR')))
      return true;
    const like = errorLike(link);
    return (
      like !== null &&
      (like.name === 'SocketError' || NETWORK_MESSAGES.test(like.message))
    );
  });
}

/** True for the DOM/undici `AbortError` anywhere in the cause chain. */
export function isAbortFailure(error: unknown): boolean {
  return causeChain(error).some(
    (link) => errorLike(link)?.name === 'AbortError',
  );
}

export function abortedError(provider: ProviderContext): LlmProviderError {
  return new LlmProviderError(
    'aborted',
    `The ${provider.name} reply was stopped.`,
  );
}

export function connectError(
  provider: ProviderContext,
  error: unknown,
): LlmProviderError {
  return new LlmProviderError(
    'network',
    cleanProviderMessage(
      `Could not reach ${provider.name} at ${provider.host}: ${networkReason(error)}.`,
      provider.apiKey,
    ),
  );
}

export function cutError(provider: ProviderContext): LlmProviderError {
  return new LlmProviderError(
    'network',
    `The connection to ${provider.name} was cut mid-reply.`,
  );
}

/** An HTTP error status with the provider's own message (used for 4xx other than auth/rate limit). */
export function statusError(
  provider: ProviderContext,
  status: number,
  providerMessage: string,
  code?: string,
): LlmProviderError {
  const name = provider.name;
  // OpenAI answers an account without credit with 429 `insufficient_quota`, others with 402.
  if (
    status === 402 ||
    code === 'insufficient_quota' ||
    /insufficient[_ ]quota|billing (?:hard )?limit|out of credit/i.test(
      providerMessage,
    )
  ) {
    return new LlmProviderError(
      'quota',
      `${name} says the account has no credit left (${status}). Add credit with the provider; unattended work is paused until tomorrow or until you resume it on the Usage page.`,
      status,
    );
  }
  if (status === 401 || status === 403) {
    return new LlmProviderError(
      'auth',
      `The ${name} API key was rejected (${status}).`,
      status,
    );
  }
  if (status === 429) {
    return new LlmProviderError(
      'rate-limit',
      `${name} rate limit reached (429). Try again in a moment.`,
      status,
    );
  }
  if (status >= 500) {
    return new LlmProviderError(
      'server',
      `${name} had a server error (${status}).`,
      status,
    );
  }
  const detail = cleanProviderMessage(providerMessage, provider.apiKey);
  return new LlmProviderError(
    'bad-request',
    detail
      ? `${name} rejected the request (${status}): ${detail}`
      : `${name} rejected the request (${status}).`,
    status,
  );
}

export function unknownError(
  provider: ProviderContext,
  error: unknown,
): LlmProviderError {
  const detail = cleanProviderMessage(
    errorLike(error)?.message ?? String(error),
    provider.apiKey,
  );
  return new LlmProviderError(
    'unknown',
    detail ? `${provider.name} failed: ${detail}` : `${provider.name} failed.`,
  );
}

export class UsageTotal {
  private inputTokens = 0;
  private outputTokens = 0;
  private totalTokens = 0;
  private seen = false;

  add(
    input: number | null | undefined,
    output: number | null | undefined,
    total: number | null | undefined,
  ): void {
    if (input == null && output == null && total == null) return;
    this.seen = true;
    this.inputTokens += input ?? 0;
    this.outputTokens += output ?? 0;
    this.totalTokens += total ?? (input ?? 0) + (output ?? 0);
  }

  /** `undefined` when the provider reported no usage at all. */
  toUsage(): TokenUsage | undefined {
    if (!this.seen) return undefined;
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      totalTokens: this.totalTokens,
    };
  }
}

/**
 * The few latest values made from a text, found again by the text itself. A system prompt is built
 * anew for every request, a new string each time, yet stays the same over many (it changes with the
 * minute, the mode, a setting): escaping and encoding its 5–10 KB was two thirds of a request body's
 * cost (stop 42). A lookup compares the text with the kept ones, a memory compare; the newest is
 * tried first.
 */
export class RecentByText<T> {
  private readonly entries: { text: string; value: T }[] = [];

  constructor(
    private readonly make: (text: string) => T,
    private readonly size = 4,
  ) {}

  get(text: string): T {
    const { entries } = this;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry.text !== text) continue;
      if (i > 0) {
        entries.splice(i, 1);
        entries.unshift(entry);
      }
      return entry.value;
    }
    const value = this.make(text);
    entries.unshift({ text, value });
    if (entries.length > this.size) entries.pop();
    return value;
  }
}
