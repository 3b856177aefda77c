import { DOCUMENT } from '@angular/common';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  inject,
  input,
  signal,
} from '@angular/core';
import { copyText } from './clipboard';
import { Icon } from './icon';

/** How long "Copied" shows before the button is a copy button again. */
export const COPIED_FEEDBACK_MS = 2_000;

/** A small "copy this text" button that says "Copied" (or that it could not) for a moment. */
@Component({
  selector: 'mt-copy-button',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <button
      type="button"
      class="copy"
      data-testid="copy-button"
      [attr.data-state]="state()"
      [attr.aria-label]="state() === 'idle' ? label() : null"
      [title]="label()"
      (click)="copy()"
    >
      <mt-icon [name]="state() === 'copied' ? 'check' : 'copy'" />
      <span class="text" aria-live="polite">{{
        state() === 'copied'
          ? 'Copied'
          : state() === 'failed'
            ? "Couldn't copy"
            : ''
      }}</span>
    </button>
  `,
  styles: `
    :host {
      display: inline-flex;
    }
    .copy {
      --mt-icon-size: 16px;
      display: inline-flex;
      align-items: center;
      gap: 4px;
      min-height: 28px;
      padding: 2px 6px;
      border: 0;
      border-radius: var(--mat-sys-corner-small);
      background: none;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-small);
      cursor: pointer;
    }
    .copy:hover,
    .copy:focus-visible {
      background: var(--mat-sys-surface-container-highest);
      color: var(--mat-sys-on-surface);
    }
    .copy[data-state='copied'] {
      color: var(--mt-on-success-container);
    }
    .copy[data-state='failed'] {
      color: var(--mat-sys-error);
    }
    .text:empty {
      display: none;
    }
  `,
})
export class CopyButton {
  private readonly document = inject(DOCUMENT);
  private timer: ReturnType<typeof setTimeout> | undefined;

  readonly text = input.required<string>();
  /** What the button copies, for screen readers and the tooltip ("Copy message"). */
  readonly label = input('Copy');

  protected readonly state = signal<'idle' | 'copied' | 'failed'>('idle');

  constructor() {
    inject(DestroyRef).onDestroy(() => clearTimeout(this.timer));
  }

  protected async copy(): Promise<void> {
    const copied = await copyText(this.text(), this.document);
    this.state.set(copied ? 'copied' : 'failed');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.state.set('idle'), COPIED_FEEDBACK_MS);
  }
}
