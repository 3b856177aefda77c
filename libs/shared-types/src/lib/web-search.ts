/** The longest query the `web_search` tool and the test route accept. */
export const WEB_SEARCH_QUERY_MAX_LENGTH = 400;
/** Results a search returns when the model does not ask for a number. */
export const WEB_SEARCH_DEFAULT_COUNT = 5;
/** The most results one search returns. */
export const WEB_SEARCH_MAX_COUNT = 10;
/** What `POST /api/web-search/test` searches for when no query is given. */
export const WEB_SEARCH_TEST_DEFAULT_QUERY = 'MetatronOS';

/** One web result as the model and the console see it: plain text, no HTML. */
export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** `POST /api/web-search/test`: one query with the stored Brave key. */
export interface WebSearchTestRequest {
  /** Defaults to {@link WEB_SEARCH_TEST_DEFAULT_QUERY}. */
  query?: string;
}

/** The test's outcome (HTTP 200 either way): how many results and the first one, or why it failed. */
export type WebSearchTestResponse =
  | {
      ok: true;
      results: number;
      durationMs: number;
      sample: { title: string; url: string } | null;
    }
  | { ok: false; error: string; durationMs: number };
