import { DOCUMENT } from '@angular/common';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  ElementRef,
  ViewEncapsulation,
  afterRenderEffect,
  computed,
  inject,
  input,
} from '@angular/core';
import { copyText } from '../ui/clipboard';
import { COPIED_FEEDBACK_MS } from '../ui/copy-button';
import { renderMarkdown } from './markdown';

const COPY_LABEL = 'Copy';

/**
 * Markdown of an assistant reply. The HTML comes from {@link renderMarkdown} (raw HTML escaped, unsafe links
 * dropped, code highlighted) and goes through Angular's `[innerHTML]` sanitizer. Not encapsulated: the
 * generated elements carry no component attributes, so the styles are scoped by the host element instead.
 * Each code block gets a Copy button here, after rendering (the sanitizer drops buttons in the HTML).
 */
@Component({
  selector: 'mt-markdown',
  changeDetection: ChangeDetectionStrategy.OnPush,
  encapsulation: ViewEncapsulation.None,
  template: `<div class="mt-markdown-body" [innerHTML]="html()"></div>`,
  styleUrl: './markdown-view.scss',
  host: { '(click)': 'onClick($event)' },
})
export class MarkdownView {
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);
  private readonly document = inject(DOCUMENT);
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  readonly source = input.required<string>();
  protected readonly html = computed(() => renderMarkdown(this.source()));

  constructor() {
    afterRenderEffect(() => {
      this.html();
      const heads = this.host.nativeElement.querySelectorAll<HTMLElement>(
        '.code-block > .code-head',
      );
      for (const head of Array.from(heads)) {
        if (head.querySelector('.code-copy')) continue;
        const button = this.document.createElement('button');
        button.type = 'button';
        button.className = 'code-copy';
        button.dataset['testid'] = 'code-copy';
        button.setAttribute('aria-label', 'Copy code');
        button.textContent = COPY_LABEL;
        head.append(button);
      }
    });
    inject(DestroyRef).onDestroy(() => this.timers.forEach(clearTimeout));
  }

  protected async onClick(event: MouseEvent): Promise<void> {
    const button = (event.target as Element | null)?.closest?.('.code-copy');
    if (!(button instanceof HTMLButtonElement)) return;
    const code = button.closest('.code-block')?.querySelector('pre code');
    const copied = await copyText(code?.textContent ?? '', this.document);
    button.textContent = copied ? 'Copied' : "Couldn't copy";
    button.dataset['state'] = copied ? 'copied' : 'failed';
    button.removeAttribute('aria-label');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      button.textContent = COPY_LABEL;
      button.setAttribute('aria-label', 'Copy code');
      delete button.dataset['state'];
    }, COPIED_FEEDBACK_MS);
    this.timers.add(timer);
  }
}
