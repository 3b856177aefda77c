import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module';
import { BraveSearchClient } from './brave-search-client';
import { DuckDuckGoSearchClient } from './duckduckgo-search-client';
import { WebSearchService } from './web-search.service';
import { WebSearchController } from './web-search.controller';
import { WebMode } from './web-mode';
import { WebSearchTool } from './web-search.tool';

/** Web search: Brave with the owner's key, DuckDuckGo without one; the `web_search` tool and `POST /api/web-search/test`. */
@Module({
  imports: [SettingsModule],
  controllers: [WebSearchController],
  providers: [
    BraveSearchClient,
    DuckDuckGoSearchClient,
    WebSearchService,
    WebSearchTool,
    WebMode,
  ],
})
export class WebSearchModule {}
