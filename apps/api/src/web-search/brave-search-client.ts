import { Inject, Injectable } from '@nestjs/common';
import {
  WEB_SEARCH_DEFAULT_COUNT,
  WEB_SEARCH_MAX_COUNT,
  type WebSearchResult,
} from '@metatronos/shared-types';
import type { AppConfig } from '../config/app-config';
import { maskSecretOccurrences } from '../settings/secret-occurrences';
import { APP_CONFIG } from '../config/app-config.provider';

/** A search that failed, with a message fit for the owner and the model (never the key). */
export class WebSearchError extends Error {}

/** The part of Brave's web search answer we read. */
interface BraveWebAnswer {
  web?: {
    results?: Array<{ title?: unknown; url?: unknown; description?: unknown }>;
  };
}

export interface WebSearchRequest {
  apiKey: string;
  query: string;
  /** 1–20; default 5. */
  count?: number;
  /** Aborts the search too (Stop, the tool timeout). */
  signal?: AbortSignal;
}

/** The Brave Search web API (`GET {base}/web/search`), under `WEB_SEARCH_TIMEOUT_MS`. */
@Injectable()
export class BraveSearchClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async search({
    apiKey,
    query,
    count,
    signal,
  }: WebSearchRequest): Promise<WebSearchResult[]> {
    const { braveBaseUrl, timeoutMs } = this.config.webSearch;
    const wanted = clampCount(count);
    const url = `${braveBaseUrl}/web/search?${new URLSearchParams({ q: query, count: String(wanted) })}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    const hide = (text: string) =>
      maskSecretOccurrences(text, [apiKey], '••••');

    let body: BraveWebAnswer;
    try {
      const response = await fetch(url, {
        headers: { Accept: 'application/json', 'X-Subscription-Token': apiKey },
        signal: combined,
      });
      if (!response.ok)
        throw new WebSearchError(
          hide(statusMessage(response.status, await errorDetail(response))),
        );
      try {
        body = (await response.json()) as BraveWebAnswer;
      } catch (error) {
        if (combined.aborted) throw error;
        throw new WebSearchError(
          'Brave Search sent an answer that is not JSON.',
        );
      }
    } catch (error) {
      if (error instanceof WebSearchError) throw error;
      if (signal?.aborted)
        throw new WebSearchError('The search was cancelled.');
      if (timeout.aborted)
        throw new WebSearchError(
          `Brave Search did not answer within ${formatSeconds(timeoutMs)}.`,
        );
      throw new WebSearchError(
        hide(`Could not reach Brave Search (${networkCause(error)}).`),
      );
    }
    return (body.web?.results ?? [])
      .map((r) => ({
        title: plainText(r.title),
        url: typeof r.url === 'string' ? r.url : '',
        snippet: plainText(r.description),
      }))
      .filter((r) => /^https?:\/\//i.test(r.url))
      .slice(0, wanted);
  }
}

export function clampCount(count: number | undefined): number {
  if (count === undefined || !Number.isFinite(count))
    return WEB_SEARCH_DEFAULT_COUNT;
  return Math.min(WEB_SEARCH_MAX_COUNT, Math.max(1, Math.trunc(count)));
}

function statusMessage(status: number, detail: string | null): string {
  if (status === 401 || status === 403) {
    return `The Brave Search key was refused (HTTP ${status}). Check the key on the Tools page.`;
  }
  if (status === 429)
    return 'Brave Search rate limit reached (HTTP 429): too many searches for this key’s plan. Try again later.';
  if (status >= 500)
    return `Brave Search is having trouble (HTTP ${status}). Try again later.`;
  return `Brave Search refused the search (HTTP ${status})${detail ? `: ${detail}` : '.'}`;
}

/** Brave's own explanation (`{ error: { detail } }`), short. */
async function errorDetail(response: Response): Promise<string | null> {
  try {
    const body = (await response.json()) as { error?: { detail?: unknown } };
    const detail = body.error?.detail;
    return typeof detail === 'string' && detail.trim()
      ? detail.trim().slice(0, 200)
      : null;
  } catch {
    return null;
  }
}

/** `fetch failed` says nothing: its cause has the code (ECONNREFUSED, ENOTFOUND…). Duck-typed, as undici's errors come from another realm under test runners. */
export function networkCause(error: unknown): string {
  const { cause, message } = (error ?? {}) as {
    cause?: { code?: unknown; message?: unknown };
    message?: unknown;
  };
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return typeof message === 'string' ? message : String(error);
}

export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  ndash: '–',
  mdash: '—',
};

/** Brave marks matches with `<strong>` and escapes text as HTML: the model wants plain text. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code =
          name[1].toLowerCase() === 'x'
            ? parseInt(name.slice(2), 16)
            : parseInt(name.slice(1), 10);
        return code > 0 && code <= 0x10ffff
          ? String.fromCodePoint(code)
          : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
