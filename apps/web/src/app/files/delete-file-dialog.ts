import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatButton } from '@angular/material/button';
import {
  MAT_DIALOG_DATA,
  MatDialogActions,
  MatDialogClose,
  MatDialogContent,
  MatDialogTitle,
} from '@angular/material/dialog';
import type { FileEntry } from '@metatronos/shared-types';

/** "Delete …?" before a file or a directory goes; closes with `true` to delete. Escape or Cancel keeps it. */
@Component({
  selector: 'mt-delete-file-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatDialogTitle,
    MatDialogContent,
    MatDialogActions,
    MatDialogClose,
  ],
  template: `
    <h2 mat-dialog-title id="delete-file-title">
      Delete {{ entry.kind === 'dir' ? 'folder' : 'file' }}?
    </h2>
    <mat-dialog-content data-testid="delete-file-text">
      <p>
        <strong class="name">{{ entry.path }}</strong>
        @if (entry.kind === 'dir') {
          and everything in it
        }
        will be deleted for good. Metatron's tools can't use it afterwards.
      </p>
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button
        mat-button
        type="button"
        [mat-dialog-close]="false"
        data-testid="delete-file-cancel"
      >
        Cancel
      </button>
      <button
        mat-flat-button
        type="button"
        class="danger"
        [mat-dialog-close]="true"
        data-testid="delete-file-confirm"
      >
        Delete
      </button>
    </mat-dialog-actions>
  `,
  styles: `
    @use '../ui/buttons';
    .name {
      font-family: var(--mt-mono-family);
      overflow-wrap: anywhere;
    }
    .danger {
      @include buttons.danger;
    }
  `,
})
export class DeleteFileDialog {
  protected readonly entry = inject<FileEntry>(MAT_DIALOG_DATA);
}
