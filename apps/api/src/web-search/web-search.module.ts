import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module';
import { BraveSearchClient } from './brave-search-client';
import { WebSearchController } from './web-search.controller';
import { WebMode } from './web-mode';
import { WebSearchTool } from './web-search.tool';

/** Web search through Brave: the client, the `web_search` tool (offered once a key is set) and `POST /api/web-search/test`. */
@Module({
  imports: [SettingsModule],
  controllers: [WebSearchController],
  providers: [BraveSearchClient, WebSearchTool, WebMode],
})
export class WebSearchModule {}
