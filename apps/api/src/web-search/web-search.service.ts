import { Injectable } from '@nestjs/common';
import type {
  WebSearchEngine,
  WebSearchResult,
} from '@metatronos/shared-types';
import type { AppSettings } from '../settings/settings.service';
import { BraveSearchClient } from './brave-search-client';
import { DuckDuckGoSearchClient } from './duckduckgo-search-client';

/** The engine `web_search` uses with these settings: Brave once a key is saved, DuckDuckGo otherwise. */
export function webSearchEngine(
  settings: Pick<AppSettings, 'braveApiKey'>,
): WebSearchEngine {
  return settings.braveApiKey ? 'brave' : 'duckduckgo';
}

/** One search with the engine in use; both answer the same result shape. Throws WebSearchError. */
@Injectable()
export class WebSearchService {
  constructor(
    private readonly brave: BraveSearchClient,
    private readonly duckduckgo: DuckDuckGoSearchClient,
  ) {}

  async search(
    settings: Pick<AppSettings, 'braveApiKey'>,
    request: { query: string; count?: number; signal?: AbortSignal },
  ): Promise<{ engine: WebSearchEngine; results: WebSearchResult[] }> {
    const engine = webSearchEngine(settings);
    const results =
      engine === 'brave' && settings.braveApiKey
        ? await this.brave.search({ apiKey: settings.braveApiKey, ...request })
        : await this.duckduckgo.search(request);
    return { engine, results };
  }
}
