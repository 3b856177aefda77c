import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  effect,
  inject,
  input,
  output,
  signal,
  untracked,
  viewChild,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { type Observable, catchError, of } from 'rxjs';
import type {
  AccountKind,
  AccountPreset,
  AccountTestResult,
  AccountView,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { warnBeforeUnload } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';
import {
  type AccountFields,
  DEFAULT_PORTS,
  type MailServerKey,
  type ServerFields,
  blankFields,
  changesConnection,
  createRequest,
  fieldErrors,
  fieldsOf,
  passwordsTyped,
  plainConnections,
  updateRequest,
  withPreset,
} from './account-fields';

export interface AccountSaved {
  account: AccountView;
  created: boolean;
}

/** What the form is busy with: both test the connection on the server. */
type FormAction = 'test' | 'save';

const SERVER_LABELS: Record<MailServerKey, string> = {
  imap: 'Incoming mail (IMAP)',
  smtp: 'Outgoing mail (SMTP)',
};

/**
 * Adds an email or calendar account (no `account` input) or edits one. Test and Save both connect to the
 * server; what goes wrong is shown in the server's words by the form, and nothing typed is lost.
 */
@Component({
  selector: 'mt-account-form',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatFormField,
    MatHint,
    MatInput,
    MatLabel,
    Icon,
    InvalidInput,
  ],
  templateUrl: './account-form.html',
  styleUrl: './account-form.scss',
})
export class AccountForm {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  private readonly nameInput =
    viewChild<ElementRef<HTMLInputElement>>('nameInput');

  /** The account to edit (a snapshot); null to add one. */
  readonly account = input<AccountView | null>(null);
  readonly saved = output<AccountSaved>();
  readonly cancelled = output<void>();

  protected readonly serverKeys: readonly MailServerKey[] = ['imap', 'smtp'];
  protected readonly serverLabels = SERVER_LABELS;

  protected readonly fields = signal<AccountFields>(blankFields('email'));
  private readonly initial = signal<AccountFields>(blankFields('email'));
  protected readonly presets = signal<readonly AccountPreset[]>([]);
  protected readonly presetId = signal('');
  protected readonly touched = signal<ReadonlySet<string>>(new Set());
  /** Save or Test was pressed: every field's problem shows. */
  protected readonly submitted = signal(false);
  protected readonly busy = signal<FormAction | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly testPassed = signal<string | null>(null);

  protected readonly editing = computed(() => this.account() !== null);
  protected readonly kind = computed(() => this.fields().kind);
  protected readonly kindPresets = computed(() =>
    this.presets().filter((preset) => preset.kind === this.kind()),
  );
  protected readonly presetNote = computed(
    () =>
      this.presets().find((preset) => preset.id === this.presetId())?.note ??
      null,
  );
  protected readonly errors = computed(() =>
    fieldErrors(this.fields(), this.editing()),
  );
  protected readonly plain = computed(() => plainConnections(this.fields()));
  protected readonly dirty = computed(
    () => JSON.stringify(this.fields()) !== JSON.stringify(this.initial()),
  );

  constructor() {
    // A (new) account to edit, or the blank form: fill the fields and focus the name.
    effect(() => {
      const account = this.account();
      untracked(() => {
        const fields = account ? fieldsOf(account) : blankFields('email');
        this.fields.set(fields);
        this.initial.set(fields);
        this.presetId.set('');
        this.touched.set(new Set());
        this.submitted.set(false);
        this.clearMessages();
        afterNextRender(() => this.nameInput()?.nativeElement.focus(), {
          injector: this.injector,
        });
      });
    });

    warnBeforeUnload(this.dirty, () => this.save());

    this.api
      .accountPresets()
      .pipe(
        catchError(() => of<AccountPreset[]>([])),
        takeUntilDestroyed(),
      )
      .subscribe((presets) => this.presets.set(presets));
  }

  /** A field's problem, once it was left or the form was submitted. */
  protected problem(field: string): string | null {
    const message = this.errors()[field];
    return message && (this.submitted() || this.touched().has(field))
      ? message
      : null;
  }

  protected touch(field: string): void {
    if (!this.touched().has(field))
      this.touched.update((set) => new Set([...set, field]));
  }

  protected chooseKind(kind: AccountKind): void {
    if (this.editing() || kind === this.kind()) return;
    // Name and login carry over; the servers belong to the other kind.
    const current = this.fields();
    this.fields.set({
      ...blankFields(kind),
      name: current.name,
      address: current.address,
      user: kind === 'calendar' ? current.imap.user : '',
      imap:
        kind === 'email'
          ? { ...blankFields('email').imap, user: current.user }
          : blankFields('email').imap,
    });
    this.presetId.set('');
    this.touched.set(new Set());
    this.submitted.set(false);
    this.clearMessages();
  }

  protected choosePreset(id: string): void {
    this.presetId.set(id);
    const preset = this.presets().find((candidate) => candidate.id === id);
    if (preset) this.fields.update((fields) => withPreset(fields, preset));
    this.clearMessages();
  }

  protected set(
    field: 'name' | 'address' | 'url' | 'user' | 'password',
    value: string,
  ): void {
    this.fields.update((fields) => {
      const next = { ...fields, [field]: value };
      // The IMAP login is usually the address: on a new account it follows the address until typed over.
      if (
        field === 'address' &&
        !this.editing() &&
        fields.imap.user.trim() === fields.address.trim()
      )
        next.imap = { ...fields.imap, user: value.trim() };
      return next;
    });
    this.clearMessages();
  }

  protected setServer(
    key: MailServerKey,
    field: 'host' | 'port' | 'user' | 'password',
    value: string,
  ): void {
    this.fields.update((fields) => ({
      ...fields,
      [key]: { ...fields[key], [field]: value },
    }));
    this.clearMessages();
  }

  /** TLS on or off; the port follows when it was the other mode's usual one. */
  protected setServerSecure(key: MailServerKey, secure: boolean): void {
    this.fields.update((fields) => {
      const server: ServerFields = { ...fields[key], secure };
      const ports = DEFAULT_PORTS[key];
      const usual = secure ? ports.plain : ports.tls;
      if (server.port.trim() === String(usual))
        server.port = String(secure ? ports.tls : ports.plain);
      return { ...fields, [key]: server };
    });
    this.clearMessages();
  }

  protected setSecure(secure: boolean): void {
    this.fields.update((fields) => ({ ...fields, secure }));
    this.clearMessages();
  }

  protected setSameLogin(sameLogin: boolean): void {
    this.fields.update((fields) => ({ ...fields, sameLogin }));
    this.clearMessages();
  }

  /** Connects with the typed settings (or, editing without new passwords, the stored ones). */
  protected test(): void {
    if (this.busy() || !this.valid()) return;
    const account = this.account();
    let request: Observable<AccountTestResult>;
    if (!account)
      request = this.api.testNewAccount(createRequest(this.fields()));
    else if (!changesConnection(updateRequest(this.fields(), account)))
      request = this.api.testAccount(account.id);
    else if (passwordsTyped(this.fields()))
      request = this.api.testNewAccount(createRequest(this.fields()));
    else {
      this.error.set(
        'Type the password to test the changed settings, or Save: saving tests them with the stored password.',
      );
      return;
    }
    this.start('test');
    request.subscribe({
      next: (result) => {
        this.busy.set(null);
        this.testPassed.set(result.detail);
      },
      error: (error: unknown) => this.fail(error, 'The test failed.'),
    });
  }

  protected save(): void {
    if (this.busy() || !this.dirty() || !this.valid()) return;
    const account = this.account();
    this.start('save');
    const request = account
      ? this.api.updateAccount(
          account.id,
          updateRequest(this.fields(), account),
        )
      : this.api.createAccount(createRequest(this.fields()));
    request.subscribe({
      next: (saved) => {
        this.busy.set(null);
        // Saved: nothing is unsaved any more, so closing the form does not ask.
        this.initial.set(this.fields());
        this.saved.emit({ account: saved, created: !account });
      },
      error: (error: unknown) => this.fail(error, 'Saving failed. Try again.'),
    });
  }

  private valid(): boolean {
    this.submitted.set(true);
    return Object.keys(this.errors()).length === 0;
  }

  private start(action: FormAction): void {
    this.busy.set(action);
    this.clearMessages();
  }

  private fail(error: unknown, fallback: string): void {
    this.busy.set(null);
    this.error.set(inlineErrorMessage(error, fallback));
  }

  private clearMessages(): void {
    if (this.error()) this.error.set(null);
    if (this.testPassed()) this.testPassed.set(null);
  }
}
