import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import type { AccountView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { UnsavedChanges } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { AccountCard } from './account-card';
import { AccountDirectory } from './account-directory';
import { AccountForm, type AccountSaved } from './account-form';
import { DraftsCard } from './drafts-card';

/** The list with `account` in place of the one with its id, or added at the end. */
export function upsertAccount(
  accounts: AccountView[],
  account: AccountView,
): AccountView[] {
  return accounts.some((item) => item.id === account.id)
    ? accounts.map((item) => (item.id === account.id ? account : item))
    : [...accounts, account];
}

/**
 * `/accounts`: the email and calendar accounts Metatron reads and writes through, and on top the
 * emails it wrote on its own that wait for the owner's approval.
 */
@Component({
  selector: 'mt-accounts-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatProgressBar,
    Icon,
    ServerError,
    AccountCard,
    AccountForm,
    DraftsCard,
  ],
  templateUrl: './accounts-page.html',
  styleUrl: './accounts-page.scss',
})
export class AccountsPage {
  private readonly api = inject(ApiClient);
  private readonly directory = inject(AccountDirectory);
  private readonly snackBar = inject(MatSnackBar);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);
  private readonly unsaved = inject(UnsavedChanges);

  protected readonly accounts = signal<AccountView[]>([]);
  protected readonly loaded = signal(false);
  /** The open form: `account` null to add one, or a snapshot of the account being edited. */
  protected readonly form = signal<{ account: AccountView | null } | null>(
    null,
  );
  protected readonly empty = computed(
    () => this.loaded() && this.accounts().length === 0,
  );
  protected readonly adding = computed(() => {
    const form = this.form();
    return form !== null && form.account === null;
  });

  private readonly live = liveResource({
    load: () => this.api.accounts(),
    apply: (accounts) => this.show(accounts),
    hasValue: this.loaded,
    failure: "Couldn't load the accounts",
    event: { name: 'accounts.changed' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected add(): void {
    if (this.form() && !this.unsaved.confirmLeave()) return;
    this.form.set({ account: null });
  }

  protected editAccount(account: AccountView): void {
    if (this.form()?.account?.id === account.id) return;
    // Another form with edits open: it is replaced only if the owner agrees.
    if (this.form() && !this.unsaved.confirmLeave()) return;
    this.form.set({ account });
  }

  protected closeForm(): void {
    const account = this.form()?.account;
    this.form.set(null);
    this.focusOpener(account?.id ?? null);
  }

  protected saved({ account, created }: AccountSaved): void {
    this.show(upsertAccount(this.accounts(), account));
    this.form.set(null);
    this.focusOpener(created ? null : account.id);
    this.snackBar.open(
      created ? `Added “${account.name}”.` : `Saved “${account.name}”.`,
      undefined,
      { duration: 3000 },
    );
  }

  protected removed(accountId: string): void {
    this.show(this.accounts().filter((account) => account.id !== accountId));
    if (this.form()?.account?.id === accountId) this.form.set(null);
    this.focusOpener(null);
  }

  private show(accounts: AccountView[]): void {
    this.accounts.set(accounts);
    this.loaded.set(true);
    this.directory.set(accounts);
  }

  /** Back to the button that opened the form: the account's Edit, else Add account. */
  private focusOpener(accountId: string | null): void {
    afterNextRender(
      () => {
        const root = this.host.nativeElement;
        const edit = accountId
          ? Array.from(
              root.querySelectorAll<HTMLElement>(
                '[data-testid="edit-account"]',
              ),
            ).find((button) => button.dataset['accountId'] === accountId)
          : undefined;
        (
          edit ?? root.querySelector<HTMLElement>('[data-testid="add-account"]')
        )?.focus();
      },
      { injector: this.injector },
    );
  }
}
