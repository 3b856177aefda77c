import { ChangeDetectionStrategy, Component } from '@angular/core';
import { ToolModesCard } from './tool-modes-card';
import { WebSearchCard } from './web-search-card';
import { WhatsAppCard } from './whatsapp-card';

/** `/tools`: what Metatron can reach beyond its own database, one card per tool or channel. */
@Component({
  selector: 'mt-tools-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [WebSearchCard, WhatsAppCard, ToolModesCard],
  templateUrl: './tools-page.html',
  styleUrl: './tools-page.scss',
})
export class ToolsPage {}
