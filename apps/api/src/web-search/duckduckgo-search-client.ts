import { Inject, Injectable } from '@nestjs/common';
import type { WebSearchResult } from '@metatronos/shared-types';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import {
  WebSearchError,
  clampCount,
  formatSeconds,
  networkCause,
} from './brave-search-client';

export interface DuckDuckGoSearchRequest {
  query: string;
  count?: number;
  signal?: AbortSignal;
}

/**
 * DuckDuckGo's HTML results page (`POST {base}/html/`, the form the no-JavaScript
 * site submits), for owners without a Brave key. Needs no key; the same result
 * shape as Brave. DuckDuckGo answers a bot check instead of results when an
 * address searches too often: that becomes a clear error, not an empty list.
 */
@Injectable()
export class DuckDuckGoSearchClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async search({
    query,
    count,
    signal,
  }: DuckDuckGoSearchRequest): Promise<WebSearchResult[]> {
    const { duckduckgoBaseUrl, timeoutMs } = this.config.webSearch;
    const wanted = clampCount(count);
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    let html: string;
    let status: number;
    try {
      const response = await fetch(`${duckduckgoBaseUrl}/html/`, {
        method: 'POST',
        headers: {
          Accept: 'text/html',
          'Content-Type': 'application/x-www-form-urlencoded',
          'User-Agent': 'Mozilla/5.0 (compatible; MetatronOS web_search)',
        },
        body: new URLSearchParams({ q: query, b: '' }).toString(),
        signal: combined,
      });
      status = response.status;
      if (status === 429 || status === 403)
        throw new WebSearchError(
          `DuckDuckGo refused the search (HTTP ${status}): too many searches from this address. Try again later, or save a Brave Search key.`,
        );
      if (status >= 500)
        throw new WebSearchError(
          `DuckDuckGo is having trouble (HTTP ${status}). Try again later.`,
        );
      if (!response.ok)
        throw new WebSearchError(
          `DuckDuckGo refused the search (HTTP ${status}).`,
        );
      html = await response.text();
    } catch (error) {
      if (error instanceof WebSearchError) throw error;
      if (signal?.aborted)
        throw new WebSearchError('The search was cancelled.');
      if (timeout.aborted)
        throw new WebSearchError(
          `DuckDuckGo did not answer within ${formatSeconds(timeoutMs)}.`,
        );
      throw new WebSearchError(
        `Could not reach DuckDuckGo (${networkCause(error)}).`,
      );
    }
    const results = await parseDuckDuckGoHtml(html);
    if (results.length === 0 && (status === 202 || isBotCheck(html)))
      throw new WebSearchError(
        'DuckDuckGo answered with a bot check instead of results (too many searches from this address). Try again later, or save a Brave Search key.',
      );
    return results.slice(0, wanted);
  }
}

function isBotCheck(html: string): boolean {
  return /anomaly-modal|challenge-form|anomaly\.js/i.test(html);
}

/**
 * The organic results of a DuckDuckGo HTML page: each `a.result__a` starts a
 * result (title, link), the next `.result__snippet` is its snippet. Ads
 * (`.result--ad`) and links that are not http(s) are dropped; DuckDuckGo's
 * redirect links (`//duckduckgo.com/l/?uddg=<url>`) are unwrapped.
 */
export async function parseDuckDuckGoHtml(
  html: string,
): Promise<WebSearchResult[]> {
  // Loaded with the first DuckDuckGo search: htmlparser2 costs start-up time otherwise.
  const { Parser } = await import('htmlparser2');
  const results: Array<WebSearchResult & { ad: boolean }> = [];
  const adStack: boolean[] = [];
  let capture: { field: 'title' | 'snippet'; depth: number } | null = null;
  let current: (WebSearchResult & { ad: boolean }) | null = null;
  const parser = new Parser(
    {
      onopentag(_name, attributes) {
        const classes = ` ${attributes['class'] ?? ''} `;
        const inAd =
          (adStack.at(-1) ?? false) || classes.includes(' result--ad ');
        adStack.push(inAd);
        if (classes.includes(' result__a ')) {
          current = {
            title: '',
            url: resultUrl(attributes['href'] ?? ''),
            snippet: '',
            ad: inAd,
          };
          results.push(current);
          capture = { field: 'title', depth: adStack.length };
        } else if (classes.includes(' result__snippet ') && current) {
          current.snippet = '';
          capture = { field: 'snippet', depth: adStack.length };
        }
      },
      ontext(text) {
        if (capture && current) current[capture.field] += text;
      },
      onclosetag() {
        if (capture && adStack.length === capture.depth) capture = null;
        adStack.pop();
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return results
    .filter((r) => !r.ad && /^https?:\/\//i.test(r.url))
    .map((r) => ({
      title: squeeze(r.title),
      url: r.url,
      snippet: squeeze(r.snippet),
    }));
}

/** The destination of a result link: DuckDuckGo's `/l/?uddg=` redirect unwrapped; ads' `/y.js` dropped. */
function resultUrl(href: string): string {
  let url: URL;
  try {
    url = new URL(href, 'https://duckduckgo.com/');
  } catch {
    return '';
  }
  if (/(^|\.)duckduckgo\.com$/i.test(url.hostname)) {
    const target = url.pathname === '/l/' ? url.searchParams.get('uddg') : null;
    return target ?? '';
  }
  return url.href;
}

function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
