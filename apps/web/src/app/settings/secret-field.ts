import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
  model,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import {
  MatFormField,
  MatHint,
  MatLabel,
  MatSuffix,
} from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { VisibilityToggle } from '../ui/visibility-toggle';
import { type SecretDraft, UNCHANGED_SECRET } from './settings-draft';

/**
 * An API key field. The saved key is never shown, only its mask (`••••abcd`) as a hint; typing replaces it,
 * leaving the field empty keeps it, and Remove clears it on the next save.
 */
@Component({
  selector: 'mt-secret-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatFormField,
    MatLabel,
    MatHint,
    MatSuffix,
    MatInput,
    MatButton,
    VisibilityToggle,
  ],
  template: `
    <div class="row">
      <mat-form-field
        appearance="outline"
        class="field"
        subscriptSizing="dynamic"
      >
        <mat-label>{{ label() }}</mat-label>
        <input
          #field
          matInput
          autocomplete="new-password"
          spellcheck="false"
          [attr.data-testid]="testId() + '-input'"
          [type]="visible() ? 'text' : 'password'"
          [placeholder]="placeholder()"
          [value]="draft().value"
          [disabled]="draft().remove"
          (input)="draft.set({ value: field.value, remove: false })"
        />
        <mt-visibility-toggle
          matSuffix
          [(visible)]="visible"
          [subject]="label()"
        />
        <mat-hint [attr.data-testid]="testId() + '-hint'">
          @if (draft().remove) {
            Will be removed when you save.
          } @else if (saved(); as saved) {
            Saved: {{ saved }}. Leave empty to keep it.
          } @else {
            Not set.
          }
        </mat-hint>
      </mat-form-field>
      @if (draft().remove) {
        <button
          mat-button
          type="button"
          [attr.data-testid]="testId() + '-undo'"
          (click)="draft.set(unchanged)"
        >
          Undo
        </button>
      } @else if (saved()) {
        <button
          mat-button
          type="button"
          class="remove"
          [attr.data-testid]="testId() + '-remove'"
          [attr.aria-label]="'Remove the ' + label()"
          (click)="draft.set({ value: '', remove: true })"
        >
          Remove
        </button>
      }
    </div>
  `,
  styles: `
    :host {
      display: block;
    }
    .row {
      display: flex;
      align-items: flex-start;
      gap: 8px;
    }
    .field {
      flex: 1;
      min-width: 0;
    }
    button {
      margin-top: 10px;
    }
    .remove {
      --mat-button-text-label-text-color: var(--mat-sys-error);
    }
  `,
})
export class SecretField {
  readonly label = input.required<string>();
  readonly testId = input.required<string>();
  /** The masked saved value, or null when none is set. */
  readonly saved = input<string | null>(null);
  readonly draft = model<SecretDraft>(UNCHANGED_SECRET);

  protected readonly unchanged = UNCHANGED_SECRET;
  protected readonly visible = signal(false);
  protected readonly placeholder = computed(() => {
    if (this.draft().remove) return 'Removed on save';
    const saved = this.saved();
    return saved ? `${saved} (unchanged)` : 'Paste the key';
  });
}
