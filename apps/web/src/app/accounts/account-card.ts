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
import { MatSnackBar } from '@angular/material/snack-bar';
import type { AccountView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';

/** One connection of an account as listed: what it connects to and how. */
export interface ConnectionLine {
  label: string;
  /** `host:port`, or the CalDAV URL. */
  target: string;
  user: string;
  /** Always the mask: the server never sends a password. */
  password: string;
  secure: boolean;
}

/** The connections an account lists: IMAP and SMTP, or its CalDAV server. */
export function connectionLines(account: AccountView): ConnectionLine[] {
  if (account.kind === 'calendar')
    return [
      {
        label: 'CalDAV',
        target: account.url,
        user: account.user,
        password: account.password,
        secure: account.secure,
      },
    ];
  return (['imap', 'smtp'] as const).map((key) => ({
    label: key.toUpperCase(),
    target: `${account[key].host}:${account[key].port}`,
    user: account[key].user,
    password: account[key].password,
    secure: account[key].secure,
  }));
}

type AccountAction = 'test' | 'delete';

/** One account in the list: its servers and logins (password masked), and Test, Edit, Remove. */
@Component({
  selector: 'mt-account-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButton, Icon],
  templateUrl: './account-card.html',
  styleUrl: './account-card.scss',
})
export class AccountCard {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  readonly account = input.required<AccountView>();
  /** The owner asked to edit the account. */
  readonly edit = output<AccountView>();
  /** The account was removed. */
  readonly removed = output<string>();

  protected readonly busy = signal<AccountAction | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly testPassed = signal<string | null>(null);
  protected readonly confirming = signal(false);
  protected readonly lines = computed(() => connectionLines(this.account()));

  protected test(): void {
    this.start('test');
    this.api.testAccount(this.account().id).subscribe({
      next: (result) => {
        this.busy.set(null);
        this.testPassed.set(result.detail);
      },
      error: (error: unknown) => this.fail(error, 'The test failed.'),
    });
  }

  protected askRemove(): void {
    this.error.set(null);
    this.confirming.set(true);
    this.focus('cancel-remove-account');
  }

  protected cancelRemove(): void {
    this.confirming.set(false);
    this.focus('remove-account');
  }

  protected confirmRemove(): void {
    const account = this.account();
    this.confirming.set(false);
    this.start('delete');
    this.api.deleteAccount(account.id).subscribe({
      next: () => {
        this.busy.set(null);
        this.removed.emit(account.id);
        this.snackBar.open(`Removed “${account.name}”.`, undefined, {
          duration: 3000,
        });
      },
      error: (error: unknown) =>
        this.fail(error, "Couldn't remove the account."),
    });
  }

  private start(action: AccountAction): void {
    this.busy.set(action);
    this.error.set(null);
    this.testPassed.set(null);
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
