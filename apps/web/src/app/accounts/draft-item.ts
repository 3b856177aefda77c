import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  inject,
  input,
  output,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatSnackBar } from '@angular/material/snack-bar';
import { RouterLink } from '@angular/router';
import type {
  EmailDraftView,
  UpdateEmailDraftRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { OwnerTimePipe } from '../core/owner-time';
import { inlineErrorMessage } from '../core/server-problem';
import { warnBeforeUnload } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';

/** Who wrote a draft, in words: a job by its name when the server kept it. */
export function draftSourceLabel(
  source: string,
  jobName: string | null = null,
): string {
  switch (source) {
    case 'cron':
      return jobName ? `job “${jobName}”` : 'Scheduled job';
    case 'pulse':
      return 'Pulse';
    case 'auto-reply':
      return 'Auto-reply';
    default:
      return source;
  }
}

/** "a@x.org, b@y.org" → ["a@x.org", "b@y.org"] (commas, semicolons or new lines between). */
export function splitAddresses(text: string): string[] {
  return text
    .split(/[,;\n]/)
    .map((part) => part.trim())
    .filter(Boolean);
}

interface DraftEdit {
  to: string;
  cc: string;
  subject: string;
  text: string;
}

function editOf(draft: EmailDraftView): DraftEdit {
  return {
    to: draft.to.join(', '),
    cc: draft.cc.join(', '),
    subject: draft.subject,
    text: draft.text,
  };
}

const ADDRESS = /^[^\s@]+@[^\s@]+$/;

type DraftAction = 'send' | 'save' | 'discard';

/** One email the AI wrote in an unattended turn: read it, edit it, send it or discard it. */
@Component({
  selector: 'mt-draft-item',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatFormField,
    MatHint,
    MatInput,
    MatLabel,
    RouterLink,
    Icon,
    InvalidInput,
    OwnerTimePipe,
  ],
  templateUrl: './draft-item.html',
  styleUrl: './draft-item.scss',
})
export class DraftItem {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  readonly draft = input.required<EmailDraftView>();
  /** The server answered with a newer view of the draft. */
  readonly changed = output<EmailDraftView>();
  /** The draft was sent or discarded: it no longer waits. */
  readonly done = output<string>();

  protected readonly busy = signal<DraftAction | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly confirming = signal(false);
  /** The fields being edited; null while the draft is only shown. */
  protected readonly edit = signal<DraftEdit | null>(null);
  protected readonly sourceLabel = computed(() =>
    draftSourceLabel(this.draft().source, this.draft().jobName),
  );
  /** Why sending failed: the answer just received, else the one the server kept. */
  protected readonly failure = computed(
    () => this.error() ?? this.draft().error,
  );

  protected readonly editChanges = computed<UpdateEmailDraftRequest>(() => {
    const edit = this.edit();
    if (!edit) return {};
    const draft = this.draft();
    const changes: UpdateEmailDraftRequest = {};
    const to = splitAddresses(edit.to);
    const cc = splitAddresses(edit.cc);
    if (to.join(',') !== draft.to.join(',')) changes.to = to;
    if (cc.join(',') !== draft.cc.join(',')) changes.cc = cc;
    if (edit.subject !== draft.subject) changes.subject = edit.subject;
    if (edit.text !== draft.text) changes.text = edit.text;
    return changes;
  });
  protected readonly dirty = computed(
    () => Object.keys(this.editChanges()).length > 0,
  );
  protected readonly toError = computed(() => {
    const edit = this.edit();
    if (!edit) return null;
    const to = splitAddresses(edit.to);
    if (to.length === 0) return 'Who gets it? Enter at least one address.';
    const wrong = [...to, ...splitAddresses(edit.cc)].find(
      (address) => !ADDRESS.test(address),
    );
    return wrong ? `“${wrong}” is not an email address.` : null;
  });

  constructor() {
    warnBeforeUnload(this.dirty, () => this.saveEdit());
  }

  protected startEdit(): void {
    this.edit.set(editOf(this.draft()));
    this.error.set(null);
    this.focus('draft-to-input');
  }

  protected change(field: keyof DraftEdit, value: string): void {
    this.edit.update((edit) => (edit ? { ...edit, [field]: value } : edit));
  }

  protected cancelEdit(): void {
    this.edit.set(null);
    this.focus('edit-draft');
  }

  protected saveEdit(): void {
    if (!this.edit() || this.busy() || this.toError()) return;
    if (!this.dirty()) {
      this.cancelEdit();
      return;
    }
    this.start('save');
    this.api.updateDraft(this.draft().id, this.editChanges()).subscribe({
      next: (draft) => {
        this.busy.set(null);
        this.edit.set(null);
        this.changed.emit(draft);
        this.focus('edit-draft');
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't save the draft. Try again."),
    });
  }

  protected send(): void {
    const draft = this.draft();
    this.start('send');
    this.api.sendDraft(draft.id).subscribe({
      next: (sent) => {
        this.busy.set(null);
        if (sent.status === 'sent') {
          this.done.emit(sent.id);
          this.snackBar.open(`Sent to ${sent.to.join(', ')}.`, undefined, {
            duration: 3000,
          });
        } else {
          this.changed.emit(sent);
        }
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't send the email. Try again."),
    });
  }

  protected askDiscard(): void {
    this.error.set(null);
    this.confirming.set(true);
    this.focus('cancel-discard-draft');
  }

  protected cancelDiscard(): void {
    this.confirming.set(false);
    this.focus('discard-draft');
  }

  protected confirmDiscard(): void {
    const draft = this.draft();
    this.confirming.set(false);
    this.start('discard');
    this.api.deleteDraft(draft.id).subscribe({
      next: () => {
        this.busy.set(null);
        this.edit.set(null);
        this.done.emit(draft.id);
        this.snackBar.open('Draft discarded.', undefined, { duration: 3000 });
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't discard the draft."),
    });
  }

  private start(action: DraftAction): void {
    this.busy.set(action);
    this.error.set(null);
  }

  private fail(error: unknown, fallback: string): void {
    this.busy.set(null);
    this.error.set(inlineErrorMessage(error, fallback));
  }

  private focus(testId: string): void {
    afterNextRender(
      () =>
        this.host.nativeElement
          .querySelector<HTMLElement>(`[data-testid="${testId}"]`)
          ?.focus(),
      { injector: this.injector },
    );
  }
}
