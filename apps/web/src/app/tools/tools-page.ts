import { ChangeDetectionStrategy, Component } from '@angular/core';
import { WebSearchCard } from './web-search-card';

/** `/tools`: what Metatron can reach beyond its own database, one card per tool (the messaging channels are on `/channels`). */
@Component({
  selector: 'mt-tools-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [WebSearchCard],
  templateUrl: './tools-page.html',
  styleUrl: './tools-page.scss',
})
export class ToolsPage {}
