import { BreakpointObserver } from '@angular/cdk/layout';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  type Signal,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toSignal } from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import {
  MatListItem,
  MatListItemIcon,
  MatListItemMeta,
  MatListItemTitle,
  MatNavList,
} from '@angular/material/list';
import {
  MatSidenav,
  MatSidenavContainer,
  MatSidenavContent,
} from '@angular/material/sidenav';
import { MatSnackBar } from '@angular/material/snack-bar';
import { MatToolbar } from '@angular/material/toolbar';
import {
  NavigationEnd,
  Router,
  RouterLink,
  RouterLinkActive,
  RouterOutlet,
} from '@angular/router';
import { EMPTY, catchError, exhaustMap, filter, map } from 'rxjs';
import { PendingDrafts } from '../accounts/pending-drafts';
import { AuthStore } from '../auth/auth-store';
import { EventStream } from '../core/event-stream';
import { PageReload, restoredNotice } from '../core/page-reload';
import { ServerStatus } from '../core/server-status';
import { ServerWatch } from '../core/server-watch';
import { Icon, Logo } from '../ui/icon';
import { KeyboardShortcuts } from './keyboard-shortcuts';
import { NAV_ITEMS, type NavBadge } from './nav-items';
import { PendingActions } from '../actions/pending-actions';

/** Wide enough for the navigation to sit beside the page instead of over it. */
export const WIDE_LAYOUT_QUERY = '(min-width: 960px)';
import { OwnerTime } from '../core/owner-time';

/** A navigation badge: how many wait, and the words for a tooltip and a screen reader. */
interface NavBadgeView {
  count: Signal<number>;
  hidden: string;
  title: (count: number) => string;
}

/** The logged-in frame: toolbar, navigation drawer and the routed page. */
@Component({
  selector: 'mt-app-shell',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    RouterOutlet,
    RouterLink,
    RouterLinkActive,
    MatToolbar,
    MatSidenav,
    MatSidenavContainer,
    MatSidenavContent,
    MatNavList,
    MatListItem,
    MatListItemIcon,
    MatListItemMeta,
    MatListItemTitle,
    MatButton,
    MatIconButton,
    Icon,
    Logo,
  ],
  templateUrl: './app-shell.html',
  styleUrl: './app-shell.scss',
  host: { '(document:keydown)': 'onKeydown($event)' },
})
export class AppShell {
  private readonly auth = inject(AuthStore);
  private readonly router = inject(Router);
  private readonly shortcuts = inject(KeyboardShortcuts);

  protected readonly navItems = NAV_ITEMS;
  protected readonly wide = toSignal(
    inject(BreakpointObserver)
      .observe(WIDE_LAYOUT_QUERY)
      .pipe(map((state) => state.matches)),
    { initialValue: true },
  );
  protected readonly menuOpen = signal(false);
  /** The latest budget notice (a cap at 80% or 100%, a pause), until dismissed. */
  protected readonly budgetNotice = signal<string | null>(null);
  protected readonly mode = computed(() => (this.wide() ? 'side' : 'over'));
  protected readonly drawerOpen = computed(
    () => this.wide() || this.menuOpen(),
  );
  protected readonly loggingOut = signal(false);
  /** Emails the AI wrote on its own (on Accounts) and tool calls (on Pending actions) that wait for the owner. */
  private readonly drafts = inject(PendingDrafts);
  private readonly actions = inject(PendingActions);
  protected readonly badges: Record<NavBadge, NavBadgeView> = {
    drafts: {
      count: this.drafts.count,
      hidden: 'emails waiting',
      title: (n) =>
        n === 1
          ? '1 email waits for your approval'
          : `${n} emails wait for your approval`,
    },
    actions: {
      count: this.actions.count,
      hidden: 'actions waiting',
      title: (n) =>
        n === 1
          ? '1 action waits for your approval'
          : `${n} actions wait for your approval`,
    },
  };

  constructor() {
    // Every time in the console is shown in the owner's zone from the settings.
    inject(OwnerTime).follow();
    this.drafts.follow();
    this.actions.follow();

    // On a narrow screen the drawer covers the page: close it once a link was followed.
    this.router.events
      .pipe(
        filter((event) => event instanceof NavigationEnd),
        takeUntilDestroyed(),
      )
      .subscribe(() => this.menuOpen.set(false));

    // A server that goes away while the console is idle shows within seconds; its return reloads the pages.
    inject(ServerWatch).start(inject(DestroyRef));

    // The database recovered: an outage banner from an earlier request is stale now.
    const events = inject(EventStream);
    const server = inject(ServerStatus);
    events
      .on('database.status')
      .pipe(
        filter((event) => event.status === 'up'),
        takeUntilDestroyed(),
      )
      .subscribe(() => server.markReachable());

    // A spend cap reached 80% or 100%, or unattended work was paused: a banner until dismissed.
    events
      .on('budget.changed')
      .pipe(takeUntilDestroyed())
      .subscribe((event) => {
        if (event.message) this.budgetNotice.set(event.message);
        else if (event.state === 'ok') this.budgetNotice.set(null);
      });
    // A backup was restored (here or in another tab): every page holds data from before it, so every console
    // reloads, the restoring one included; after the reload it says why.
    const reload = inject(PageReload);
    events
      .on('backup.restored')
      .pipe(takeUntilDestroyed())
      .subscribe((event) => reload.afterRestore(event));
    const restored = reload.takeRestored();
    if (restored)
      inject(MatSnackBar).open(restoredNotice(restored), 'OK', {
        duration: 8000,
      });

    // Some session logged out (maybe this one, from another tab): ask the server whether ours is still valid.
    events
      .on('auth.logged_out')
      .pipe(
        exhaustMap(() =>
          this.auth.ensureStatus(true).pipe(catchError(() => EMPTY)),
        ),
        takeUntilDestroyed(),
      )
      .subscribe((status) => {
        if (!status.authenticated) void this.router.navigateByUrl('/login');
      });
  }

  protected onKeydown(event: KeyboardEvent): void {
    this.shortcuts.handle(event);
  }

  protected showShortcuts(): void {
    this.shortcuts.openHelp();
  }

  protected toggleMenu(): void {
    this.menuOpen.update((open) => !open);
  }

  protected drawerClosed(): void {
    this.menuOpen.set(false);
  }

  protected logout(): void {
    if (this.loggingOut()) return;
    this.loggingOut.set(true);
    this.auth.logout().subscribe({
      next: () => void this.router.navigateByUrl('/login'),
      // Unreachable server: the banner explains it; the session is still open, so stay.
      error: () => this.loggingOut.set(false),
    });
  }
}
