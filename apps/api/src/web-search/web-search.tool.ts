import { Injectable } from '@nestjs/common';
import {
  WEB_SEARCH_DEFAULT_COUNT,
  WEB_SEARCH_MAX_COUNT,
  WEB_SEARCH_QUERY_MAX_LENGTH,
} from '@metatronos/shared-types';
import { z } from 'zod';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import { WebSearchError } from './brave-search-client';
import { WebSearchService } from './web-search.service';

const WEB_SEARCH_ARGS = z.object({
  q: z
    .string()
    .max(WEB_SEARCH_QUERY_MAX_LENGTH)
    .describe('Search keywords, as you would type them into a search engine'),
  max_results: z
    .int()
    .min(1)
    .max(WEB_SEARCH_MAX_COUNT)
    .optional()
    .describe(`How many results (default ${WEB_SEARCH_DEFAULT_COUNT})`),
});

/** `web_search`: Brave Search when the owner saved a key, DuckDuckGo's HTML results otherwise; one result shape. */
@AiToolProvider()
@Injectable()
export class WebSearchTool implements AiTool<typeof WEB_SEARCH_ARGS> {
  readonly name = 'web_search';
  readonly modes = ['web'];
  readonly description =
    'Search the web for current or outside information: news, facts you are unsure of, prices, opening hours, documentation. ' +
    'Returns the top results as title, url and a short snippet. Cite the results you use as Markdown links [title](url).';
  readonly schema = WEB_SEARCH_ARGS;
  readonly promptLine =
    'search the web for current facts; cite the results you used as Markdown links [title](url).';

  constructor(private readonly search: WebSearchService) {}

  /** Search results are pages' words, written by anyone. */
  taint(args: z.output<typeof WEB_SEARCH_ARGS>): { text: string } {
    return { text: `web search results for “${args.q.trim().slice(0, 80)}”` };
  }

  async execute(
    args: z.output<typeof WEB_SEARCH_ARGS>,
    { settings, signal }: AiToolContext,
  ): Promise<string> {
    const query = args.q.trim();
    if (!query) return toolError('q must not be empty');
    try {
      const { engine, results } = await this.search.search(settings, {
        query,
        count: args.max_results,
        signal,
      });
      return JSON.stringify({ query, engine, results });
    } catch (error) {
      if (error instanceof WebSearchError) return toolError(error.message);
      throw error;
    }
  }
}
