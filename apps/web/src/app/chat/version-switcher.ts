import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
  output,
} from '@angular/core';
import type { MessageVersions } from '@metatronos/shared-types';
import { Icon } from '../ui/icon';

/**
 * "← 2/3 →" under a message with versions (an edit, a regenerate): the arrows show the version before or
 * after, as the well-known chat apps do. `go` carries the version number (1-based) to show.
 */
@Component({
  selector: 'mt-version-switcher',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <div
      class="versions"
      role="group"
      data-testid="message-versions"
      [attr.aria-label]="label()"
    >
      <button
        type="button"
        class="arrow"
        data-testid="version-previous"
        aria-label="Previous version"
        [disabled]="disabled() || versions().index <= 1"
        (click)="go.emit(versions().index - 1)"
      >
        <mt-icon name="chevronLeft" />
      </button>
      <span class="count" data-testid="version-label" aria-hidden="true"
        >{{ versions().index }}/{{ versions().count }}</span
      >
      <button
        type="button"
        class="arrow"
        data-testid="version-next"
        aria-label="Next version"
        [disabled]="disabled() || versions().index >= versions().count"
        (click)="go.emit(versions().index + 1)"
      >
        <mt-icon name="chevronRight" />
      </button>
    </div>
  `,
  styles: `
    :host {
      display: inline-flex;
    }
    .versions {
      display: inline-flex;
      align-items: center;
      gap: 2px;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-medium);
      font-variant-numeric: tabular-nums;
    }
    .arrow {
      display: inline-flex;
      align-items: center;
      justify-content: center;
      width: 32px;
      height: 32px;
      padding: 0;
      border: none;
      border-radius: 50%;
      background: none;
      color: inherit;
      cursor: pointer;
      --mt-icon-size: 18px;
    }
    .arrow:hover:not(:disabled) {
      background: color-mix(in srgb, var(--mat-sys-on-surface) 8%, transparent);
      color: var(--mat-sys-on-surface);
    }
    .arrow:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 1px;
    }
    .arrow:disabled {
      opacity: 0.38;
      cursor: default;
    }
    .count {
      min-width: 2.5em;
      text-align: center;
    }
  `,
})
export class VersionSwitcher {
  readonly versions = input.required<MessageVersions>();
  /** While a reply runs or a switch is under way: the arrows wait. */
  readonly disabled = input(false);
  readonly go = output<number>();
  protected readonly label = computed(
    () => `Version ${this.versions().index} of ${this.versions().count}`,
  );
}
