import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatButton } from '@angular/material/button';
import {
  MAT_DIALOG_DATA,
  MatDialogActions,
  MatDialogClose,
  MatDialogContent,
  MatDialogTitle,
} from '@angular/material/dialog';
import type { ShortcutHelpLine } from './keyboard-shortcuts';

/** The keyboard shortcuts, opened with `?`. Escape or Close closes it and focus goes back where it was. */
@Component({
  selector: 'mt-shortcuts-help',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatDialogTitle,
    MatDialogContent,
    MatDialogActions,
    MatDialogClose,
  ],
  template: `
    <h2 mat-dialog-title id="shortcuts-help-title">Keyboard shortcuts</h2>
    <mat-dialog-content>
      <dl class="list" data-testid="shortcuts-list">
        @for (line of lines; track line.action) {
          <div class="line" [attr.data-action]="line.action">
            <dt class="keys">
              @for (combo of line.keys; track $index) {
                @if (!$first) {
                  <span class="or">or</span>
                }
                <span class="combo">
                  @for (key of combo; track $index) {
                    <kbd>{{ key }}</kbd>
                  }
                </span>
              }
            </dt>
            <dd class="does">{{ line.does }}</dd>
          </div>
        }
      </dl>
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button
        mat-button
        type="button"
        mat-dialog-close
        data-testid="shortcuts-close"
      >
        Close
      </button>
    </mat-dialog-actions>
  `,
  styles: `
    .list {
      display: grid;
      gap: 10px;
      margin: 0;
    }
    .line {
      display: grid;
      grid-template-columns: minmax(0, 1fr) auto;
      align-items: center;
      gap: 4px 16px;
    }
    .keys {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      justify-content: flex-end;
      gap: 6px;
    }
    .combo {
      display: inline-flex;
      gap: 3px;
    }
    .or {
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-small);
    }
    kbd {
      min-width: 1.4em;
      padding: 1px 6px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-bottom-width: 2px;
      border-radius: 4px;
      background: var(--mat-sys-surface-container-high);
      font: 12px/1.5 var(--mt-mono-family);
      text-align: center;
    }
    .does {
      order: -1;
      margin: 0;
    }
  `,
})
export class ShortcutsHelp {
  protected readonly lines = inject<ShortcutHelpLine[]>(MAT_DIALOG_DATA);
}
