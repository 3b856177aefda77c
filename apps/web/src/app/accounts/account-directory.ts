import {
  DestroyRef,
  Injectable,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import type { AccountView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';

/**
 * The owner's accounts as the console last saw them, for views that only show an account's name (the chat's
 * mode chip). Loaded on first use and again on `accounts.changed`; empty while unknown.
 */
@Injectable({ providedIn: 'root' })
export class AccountDirectory {
  private readonly api = inject(ApiClient);
  private readonly events = inject(EventStream);
  private readonly destroyRef = inject(DestroyRef);
  private readonly list = signal<readonly AccountView[]>([]);
  private following = false;

  readonly accounts = this.list.asReadonly();
  private readonly byId = computed(
    () => new Map(this.list().map((account) => [account.id, account])),
  );

  /** Starts loading (once) and following the server's changes. */
  follow(): void {
    if (this.following) return;
    this.following = true;
    this.events
      .on('accounts.changed')
      .pipe(takeUntilDestroyed(this.destroyRef))
      .subscribe(() => this.load());
    this.load();
  }

  /** A fresher list (e.g. the Accounts page's own load). */
  set(accounts: readonly AccountView[]): void {
    this.list.set(accounts);
  }

  /** What an account is called in the console: its name, else its address; null when unknown. */
  label(accountId: string | null): string | null {
    if (!accountId) return null;
    const account = this.byId().get(accountId);
    if (!account) return null;
    return account.name.trim() || account.address || null;
  }

  /**
   * The account a chat in `mode` works on, as the server picks it: in the `email` and `calendar` modes the
   * selected account of that kind, else the only one of that kind; in other modes the selected account.
   */
  inUse(mode: string, accountId: string | null): string | null {
    if (mode !== 'email' && mode !== 'calendar') return this.label(accountId);
    const ofKind = this.list().filter((account) => account.kind === mode);
    const selected = ofKind.find((account) => account.id === accountId);
    const account = selected ?? (ofKind.length === 1 ? ofKind[0] : null);
    return account ? this.label(account.id) : null;
  }

  private load(): void {
    this.api.accounts().subscribe({
      next: (accounts) => this.list.set(accounts),
      // Unknown accounts show no name; the next change or use tries again.
      error: () => undefined,
    });
  }
}
