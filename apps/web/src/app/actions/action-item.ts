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
import { RouterLink } from '@angular/router';
import type { PendingActionView } from '@metatronos/shared-types';
import { toolArguments, words } from '../chat/tool-labels';
import { prettyJson } from '../chat/tool-chip';
import { OwnerTimePipe } from '../core/owner-time';
import { warnBeforeUnload } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';
import { ActionsApi } from './actions-api';
import {
  actionErrorMessage,
  actionLabel,
  actionSourceLabel,
  argumentChanges,
  taintText,
} from './action-words';
import type { ActionOutcome, ActionSettled } from './pending-actions';

/** Arguments whose text is long enough to deserve a text area. */
const LONG_TEXT_KEYS = new Set([
  'text',
  'message',
  'body',
  'content',
  'caption',
  'html',
]);
/** Arguments that hold a list of addresses, edited as one comma-separated line. */
const ADDRESS_LIST_KEYS = new Set(['to', 'cc', 'bcc']);

/** One argument the form edits on its own: text, or a list of addresses. */
interface ArgumentField {
  key: string;
  label: string;
  kind: 'line' | 'text' | 'list';
}

function fieldsOf(args: Record<string, unknown>): ArgumentField[] {
  return Object.entries(args).flatMap(([key, value]): ArgumentField[] => {
    if (typeof value === 'string') {
      const long =
        LONG_TEXT_KEYS.has(key) || value.length > 80 || value.includes('\n');
      return [{ key, label: words(key), kind: long ? 'text' : 'line' }];
    }
    if (
      ADDRESS_LIST_KEYS.has(key) &&
      Array.isArray(value) &&
      value.every((item) => typeof item === 'string')
    )
      return [{ key, label: words(key), kind: 'list' }];
    return [];
  });
}

function splitList(text: string): string[] {
  return text
    .split(/[,;\n]/)
    .map((part) => part.trim())
    .filter(Boolean);
}

type Busy = 'approve' | 'discard' | 'save';

/**
 * One tool call that waits for the owner: what it would do, why it waits, where it came from, and
 * Approve / Edit / Discard. `compact` (inline in a chat) leaves out the source and Edit.
 */
@Component({
  selector: 'mt-action-item',
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
  templateUrl: './action-item.html',
  styleUrl: './action-item.scss',
})
export class ActionItem {
  private readonly api = inject(ActionsApi);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  readonly action = input.required<PendingActionView>();
  /** Set once the action was approved or discarded here: shown instead of the buttons. */
  readonly outcome = input<ActionOutcome | null>(null);
  /** Job names by id, to name the job that proposed the action. */
  readonly jobNames = input<ReadonlyMap<string, string>>(new Map());
  /** Inline in its chat: no source line, no Edit (the Pending actions page has it). */
  readonly compact = input(false);
  /** The server answered an edit with the new view. */
  readonly changed = output<PendingActionView>();
  /** Approved (done or failed) or discarded. */
  readonly settled = output<ActionSettled>();

  protected readonly busy = signal<Busy | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly detailsShown = signal(false);
  protected readonly resultShown = signal(false);

  protected readonly label = computed(() =>
    actionLabel(this.action().tool, this.action().arguments),
  );
  protected readonly source = computed(() =>
    actionSourceLabel(this.action(), this.jobNames()),
  );
  protected readonly args = computed(() =>
    toolArguments(this.action().arguments),
  );
  /** The turn's marks, when the reason does not already say them. */
  protected readonly taint = computed(() => {
    const action = this.action();
    return action.tainted &&
      action.taint?.length &&
      action.reason?.kind !== 'tainted'
      ? `This turn ${taintText(action.taint)}.`
      : null;
  });
  protected readonly resultText = computed(() => {
    const outcome = this.outcome();
    return outcome ? prettyJson(outcome.result) : '';
  });
  protected readonly idPrefix = computed(() => `action-${this.action().id}`);

  // Edit
  /** The arguments being edited; null while the action is only shown. */
  protected readonly draft = signal<Record<string, unknown> | null>(null);
  /** Editing the whole arguments as JSON instead of field by field. */
  protected readonly jsonMode = signal(false);
  protected readonly jsonText = signal('');
  protected readonly fields = computed(() => fieldsOf(this.action().arguments));
  protected readonly jsonError = computed(() => {
    if (!this.jsonMode()) return null;
    return parseArguments(this.jsonText()) ? null : 'Not a JSON object.';
  });
  /** The arguments the edit would save. */
  private readonly edited = computed(() =>
    this.jsonMode() ? parseArguments(this.jsonText()) : this.draft(),
  );
  protected readonly changes = computed(() => {
    const edited = this.edited();
    return this.draft() && edited
      ? argumentChanges(this.action().arguments, edited)
      : [];
  });
  protected readonly dirty = computed(() => this.changes().length > 0);

  constructor() {
    warnBeforeUnload(this.dirty, () => this.save());
  }

  protected fieldValue(field: ArgumentField): string {
    const value = this.draft()?.[field.key];
    if (field.kind === 'list')
      return Array.isArray(value) ? value.join(', ') : '';
    return typeof value === 'string' ? value : '';
  }

  protected setField(field: ArgumentField, text: string): void {
    const value = field.kind === 'list' ? splitList(text) : text;
    this.draft.update((draft) =>
      draft ? { ...draft, [field.key]: value } : draft,
    );
  }

  protected startEdit(): void {
    const args = this.action().arguments;
    this.draft.set({ ...args });
    this.jsonText.set(JSON.stringify(args, null, 2));
    this.jsonMode.set(this.fields().length === 0);
    this.error.set(null);
    this.focus('action-edit-form', 'textarea, input');
  }

  /** Switches between the fields and the JSON text, carrying the edits over. */
  protected toggleJson(): void {
    if (this.jsonMode()) {
      const parsed = parseArguments(this.jsonText());
      if (!parsed) return;
      this.draft.set(parsed);
      this.jsonMode.set(false);
    } else {
      this.jsonText.set(JSON.stringify(this.draft() ?? {}, null, 2));
      this.jsonMode.set(true);
    }
  }

  protected cancelEdit(): void {
    this.draft.set(null);
    this.jsonMode.set(false);
    this.error.set(null);
    this.focus('edit-action');
  }

  protected save(): void {
    const edited = this.edited();
    if (!this.draft() || !edited || this.busy()) return;
    if (!this.dirty()) {
      this.cancelEdit();
      return;
    }
    this.start('save');
    this.api.edit(this.action().id, { arguments: edited }).subscribe({
      next: (action) => {
        this.busy.set(null);
        this.draft.set(null);
        this.jsonMode.set(false);
        this.changed.emit(action);
        this.focus('edit-action');
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't save the change. Try again."),
    });
  }

  protected approve(): void {
    if (this.busy()) return;
    const action = this.action();
    this.start('approve');
    this.api.approve(action.id).subscribe({
      next: (answer) => {
        this.busy.set(null);
        this.settled.emit({
          action,
          outcome: {
            status: answer.status === 'failed' ? 'failed' : 'done',
            result: answer.result,
            error: answer.error ?? null,
          },
        });
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't approve the action. Try again."),
    });
  }

  protected discard(): void {
    if (this.busy()) return;
    const action = this.action();
    this.start('discard');
    this.api.discard(action.id).subscribe({
      next: () => {
        this.busy.set(null);
        this.settled.emit({
          action,
          outcome: { status: 'discarded', result: null, error: null },
        });
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't discard the action. Try again."),
    });
  }

  private start(busy: Busy): void {
    this.busy.set(busy);
    this.error.set(null);
  }

  private fail(error: unknown, fallback: string): void {
    this.busy.set(null);
    this.error.set(actionErrorMessage(error, fallback));
  }

  private focus(testId: string, inside?: string): void {
    afterNextRender(
      () => {
        const target = this.host.nativeElement.querySelector<HTMLElement>(
          `[data-testid="${testId}"]`,
        );
        (inside ? target?.querySelector<HTMLElement>(inside) : target)?.focus();
      },
      { injector: this.injector },
    );
  }
}

/** The text as a JSON object, or null when it is not one. */
export function parseArguments(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
