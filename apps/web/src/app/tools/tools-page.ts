import { ChangeDetectionStrategy, Component } from '@angular/core';
import { McpServersCard } from './mcp-servers-card';
import { ToolModesCard } from './tool-modes-card';
import { UrlFetchCard } from './url-fetch-card';
import { WebSearchCard } from './web-search-card';

/** `/tools`: what Metatron can reach beyond its own database, one card per tool (the messaging channels are on `/channels`). */
@Component({
  selector: 'mt-tools-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [WebSearchCard, UrlFetchCard, McpServersCard, ToolModesCard],
  templateUrl: './tools-page.html',
  styleUrl: './tools-page.scss',
})
export class ToolsPage {}
