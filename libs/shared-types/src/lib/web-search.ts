/** Which search engine `web_search` uses: Brave when a key is saved, DuckDuckGo otherwise. */
export type WebSearchEngine = 'brave' | 'duckduckgo';

/** The longest query the `web_search` tool and the test route accept. */
export const WEB_SEARCH_QUERY_MAX_LENGTH = 400;
/** Results a search returns when the model does not ask for a number. */
export const WEB_SEARCH_DEFAULT_COUNT = 5;
/** The most results one search returns (`max_results`). */
export const WEB_SEARCH_MAX_COUNT = 20;
/** What `POST /api/web-search/test` searches for when no query is given. */
export const WEB_SEARCH_TEST_DEFAULT_QUERY = 'MetatronOS';

/** One web result as the model and the console see it: plain text, no HTML. */
export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** `POST /api/web-search/test`: one query with the engine in use (Brave with the stored key, else DuckDuckGo). */
export interface WebSearchTestRequest {
  /** Defaults to {@link WEB_SEARCH_TEST_DEFAULT_QUERY}. */
  query?: string;
}

/** The test's outcome (HTTP 200 either way): how many results and the first one, or why it failed. */
export type WebSearchTestResponse =
  | {
      ok: true;
      engine: WebSearchEngine;
      results: number;
      durationMs: number;
      sample: { title: string; url: string } | null;
    }
  | { ok: false; engine: WebSearchEngine; error: string; durationMs: number };
