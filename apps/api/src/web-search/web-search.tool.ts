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
  type AiToolAvailabilityContext,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import { BraveSearchClient, WebSearchError } from './brave-search-client';

const WEB_SEARCH_ARGS = z.object({
  query: z
    .string()
    .max(WEB_SEARCH_QUERY_MAX_LENGTH)
    .describe('What to search for, as you would type it into a search engine'),
  count: z
    .int()
    .min(1)
    .max(WEB_SEARCH_MAX_COUNT)
    .optional()
    .describe(`How many results (default ${WEB_SEARCH_DEFAULT_COUNT})`),
});

/** `web_search`: Brave Search results for the model, offered only once the owner set a Brave key. */
@AiToolProvider()
@Injectable()
export class WebSearchTool implements AiTool<typeof WEB_SEARCH_ARGS> {
  readonly name = 'web_search';
  readonly modes = ['web'];
  readonly description =
    'Search the web (Brave Search) for current or outside information: news, facts you are unsure of, prices, opening hours, documentation. ' +
    'Returns the top results as title, url and a short snippet. Cite the results you use as Markdown links [title](url).';
  readonly schema = WEB_SEARCH_ARGS;
  readonly promptLine =
    'search the web for current facts; cite the results you used as Markdown links [title](url).';

  constructor(private readonly brave: BraveSearchClient) {}

  isAvailable({ settings }: AiToolAvailabilityContext): boolean {
    return !!settings.braveApiKey;
  }

  unavailableReason({ settings }: AiToolAvailabilityContext): string | null {
    return settings.braveApiKey
      ? null
      : 'No Brave Search API key is set (Settings).';
  }

  async execute(
    args: z.output<typeof WEB_SEARCH_ARGS>,
    { settings, signal }: AiToolContext,
  ): Promise<string> {
    const query = args.query.trim();
    if (!query) return toolError('query must not be empty');
    const apiKey = settings.braveApiKey;
    if (!apiKey)
      return toolError(
        'Web search is not set up: the owner has no Brave Search key.',
      );
    try {
      const results = await this.brave.search({
        apiKey,
        query,
        count: args.count,
        signal,
      });
      return JSON.stringify({ query, results });
    } catch (error) {
      if (error instanceof WebSearchError) return toolError(error.message);
      throw error;
    }
  }
}
