import { Injectable } from '@nestjs/common';
import {
  WEB_SEARCH_DEFAULT_COUNT,
  WEB_SEARCH_MAX_COUNT,
  WEB_SEARCH_QUERY_MAX_LENGTH,
} from '@metatronos/shared-types';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolAvailabilityContext,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import { BraveSearchClient, WebSearchError } from './brave-search-client';

/** `web_search`: Brave Search results for the model, offered only once the owner set a Brave key. */
@AiToolProvider()
@Injectable()
export class WebSearchTool implements AiTool {
  readonly definition = {
    name: 'web_search',
    description:
      'Search the web (Brave Search) for current or outside information: news, facts you are unsure of, prices, opening hours, documentation. ' +
      'Returns the top results as title, url and a short snippet. Cite the results you use as Markdown links [title](url).',
    parameters: {
      type: 'object' as const,
      properties: {
        query: {
          type: 'string',
          maxLength: WEB_SEARCH_QUERY_MAX_LENGTH,
          description:
            'What to search for, as you would type it into a search engine',
        },
        count: {
          type: 'integer',
          minimum: 1,
          maximum: WEB_SEARCH_MAX_COUNT,
          description: `How many results (default ${WEB_SEARCH_DEFAULT_COUNT})`,
        },
      },
      required: ['query'],
    },
  };
  readonly promptLine =
    'search the web for current information; cite the results you used as Markdown links [title](url).';

  constructor(private readonly brave: BraveSearchClient) {}

  isAvailable({ settings }: AiToolAvailabilityContext): boolean {
    return !!settings.braveApiKey;
  }

  async execute(
    args: Record<string, unknown>,
    { settings, signal }: AiToolContext,
  ): Promise<string> {
    const query = (args['query'] as string).trim();
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
        count: args['count'] as number | undefined,
        signal,
      });
      return JSON.stringify({ query, results });
    } catch (error) {
      if (error instanceof WebSearchError) return toolError(error.message);
      throw error;
    }
  }
}
