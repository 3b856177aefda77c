import {
  ChangeDetectionStrategy,
  Component,
  ViewEncapsulation,
  computed,
  input,
} from '@angular/core';
import { renderMarkdown } from './markdown';

/**
 * Markdown of an assistant reply. The HTML comes from {@link renderMarkdown} (raw HTML escaped, unsafe links
 * dropped) and goes through Angular's `[innerHTML]` sanitizer. Not encapsulated: the generated elements carry
 * no component attributes, so the styles are scoped by the host element instead.
 */
@Component({
  selector: 'mt-markdown',
  changeDetection: ChangeDetectionStrategy.OnPush,
  encapsulation: ViewEncapsulation.None,
  template: `<div class="mt-markdown-body" [innerHTML]="html()"></div>`,
  styleUrl: './markdown-view.scss',
})
export class MarkdownView {
  readonly source = input.required<string>();
  protected readonly html = computed(() => renderMarkdown(this.source()));
}
