import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  computed,
  inject,
  input,
  signal,
} from '@angular/core';

/** After this long without a token the indicator says the model is slow (the server gives up at 60 s by default). */
export const SLOW_AFTER_MS = 20_000;

/** "4 s", "1 min 5 s". */
export function elapsedText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Dots and the seconds spent waiting for the model's first token or its next step. */
@Component({
  selector: 'mt-thinking',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <p class="thinking" data-testid="assistant-thinking">
      <span class="dot"></span><span class="dot"></span
      ><span class="dot"></span>
      <span class="label">
        {{ slow() ? 'Still waiting for the model…' : 'Thinking…' }}
        <span class="elapsed" data-testid="thinking-elapsed">{{
          elapsed()
        }}</span>
      </span>
    </p>
  `,
  styles: `
    :host {
      display: block;
    }
    .thinking {
      display: flex;
      align-items: center;
      gap: 4px;
      margin: 6px 0;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }
    .label {
      margin-left: 6px;
    }
    .elapsed {
      font-variant-numeric: tabular-nums;
    }
    .dot {
      width: 8px;
      height: 8px;
      border-radius: 50%;
      background: var(--mat-sys-on-surface-variant);
      animation: mt-blink 1.2s infinite ease-in-out both;
    }
    .dot:nth-child(2) {
      animation-delay: 0.2s;
    }
    .dot:nth-child(3) {
      animation-delay: 0.4s;
    }
    @keyframes mt-blink {
      0%,
      80%,
      100% {
        opacity: 0.25;
      }
      40% {
        opacity: 1;
      }
    }
  `,
})
export class ThinkingIndicator {
  /** When the wait began (ms since the epoch). */
  readonly since = input.required<number>();

  private readonly now = signal(Date.now());
  protected readonly waited = computed(() => this.now() - this.since());
  protected readonly elapsed = computed(() => elapsedText(this.waited()));
  protected readonly slow = computed(() => this.waited() >= SLOW_AFTER_MS);

  constructor() {
    const timer = setInterval(() => this.now.set(Date.now()), 1000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }
}
