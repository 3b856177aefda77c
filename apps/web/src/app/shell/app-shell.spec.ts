import { BreakpointObserver, type BreakpointState } from '@angular/cdk/layout';
import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { Component, signal } from '@angular/core';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { BehaviorSubject, Subject, filter, map } from 'rxjs';
import type {
  AppEventMap,
  AppEventName,
  EmailDraftView,
} from '@metatronos/shared-types';
import { emailDraft } from '../testing/account-data';
import { pendingAction } from '../testing/action-data';
import { AuthStore } from '../auth/auth-store';
import { type AppEvent, EventStream } from '../core/event-stream';
import { PageReload, restoredNotice } from '../core/page-reload';
import { ServerStatus } from '../core/server-status';
import { AppShell } from './app-shell';
import { NAV_ITEMS } from './nav-items';

@Component({ selector: 'mt-stub', template: 'stub page' })
class Stub {}

class FakeEventStream {
  readonly state = signal('open');
  readonly stateChanges$ = new Subject<string>();
  readonly events = new Subject<AppEvent>();
  on<K extends AppEventName>(name: K) {
    return this.events.pipe(
      filter((event) => event.name === name),
      map((event) => event.data as AppEventMap[K]),
    );
  }
}

describe('AppShell', () => {
  let fixture: ComponentFixture<AppShell>;
  let http: HttpTestingController;
  let router: Router;
  let events: FakeEventStream;
  let layout: BehaviorSubject<BreakpointState>;

  const el = (selector: string) =>
    fixture.nativeElement.querySelector(selector) as HTMLElement | null;
  const byTestId = (id: string) => el(`[data-testid="${id}"]`);

  beforeEach(async () => {
    events = new FakeEventStream();
    layout = new BehaviorSubject<BreakpointState>({
      matches: true,
      breakpoints: {},
    });
    TestBed.configureTestingModule({
      imports: [AppShell],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([
          { path: 'system', component: Stub },
          { path: 'login', component: Stub },
        ]),
        { provide: EventStream, useValue: events },
        { provide: BreakpointObserver, useValue: { observe: () => layout } },
      ],
    });
    http = TestBed.inject(HttpTestingController);
    router = TestBed.inject(Router);
    // Logged in.
    TestBed.inject(AuthStore).login('pw').subscribe();
    http.expectOne('/api/auth/login').flush({});
    fixture = TestBed.createComponent(AppShell);
    // The owner's time zone for every time shown.
    http.expectOne('/api/settings').flush({ timezone: 'UTC' });
    // The emails waiting for approval, for the badge on Accounts: none.
    flushDrafts([], []);
    // The actions waiting for approval, for the badge on Pending actions: none.
    http.expectOne('/api/actions?status=pending').flush([]);
    await fixture.whenStable();
  });

  /** Answers the shell's two draft requests (pending, then failed). */
  function flushDrafts(
    pending: EmailDraftView[],
    failed: EmailDraftView[],
  ): void {
    http.expectOne('/api/drafts?status=pending').flush(pending);
    http.expectOne('/api/drafts?status=failed').flush(failed);
  }

  afterEach(() => http.verify());

  it('shows the product name in the toolbar and one link per nav item', () => {
    expect(byTestId('app-toolbar')?.textContent).toContain('MetatronOS');
    const links = fixture.nativeElement.querySelectorAll(
      'nav a[data-testid^="nav-"]',
    ) as NodeListOf<HTMLAnchorElement>;
    expect(links).toHaveLength(NAV_ITEMS.length);
    expect(Array.from(links).map((link) => link.textContent?.trim())).toEqual([
      'Chat',
      'Pending actions',
      'Automations',
      'Tools',
      'Channels',
      'Accounts',
      'Memory',
      'Instruction',
      'Data',
      'Files',
      'Usage',
      'Settings',
      'System',
    ]);
    const system = byTestId('nav-system') as HTMLAnchorElement;
    expect(system.getAttribute('href')).toBe('/system');
    expect(system.textContent?.trim()).toBe('System');
  });

  it('counts the emails waiting for approval on Accounts, and follows drafts.changed', async () => {
    expect(byTestId('nav-accounts-badge')).toBeNull();
    events.events.next({
      name: 'drafts.changed',
      data: { id: 'd1', change: 'created', at: '2026-11-28T10:00:00.000Z' },
    });
    flushDrafts(
      [emailDraft('d1'), emailDraft('d2')],
      [emailDraft('d3', { status: 'failed', error: 'Mailbox full' })],
    );
    await fixture.whenStable();
    expect(byTestId('nav-accounts-badge')?.textContent?.trim()).toBe(
      ', emails waiting: 3',
    );
    expect(byTestId('nav-accounts-badge')?.getAttribute('title')).toBe(
      '3 emails wait for your approval',
    );

    events.events.next({
      name: 'drafts.changed',
      data: { id: 'd1', change: 'sent', at: '2026-11-28T10:01:00.000Z' },
    });
    flushDrafts([], []);
    await fixture.whenStable();
    expect(byTestId('nav-accounts-badge')).toBeNull();
  });

  it('counts the actions waiting for approval on Pending actions, and follows actions.changed', async () => {
    expect(byTestId('nav-actions-badge')).toBeNull();
    events.events.next({
      name: 'actions.changed',
      data: {
        id: 'a1',
        change: 'created',
        chatId: null,
        at: '2026-11-28T10:00:00.000Z',
      },
    });
    http.expectOne('/api/actions?status=pending').flush([pendingAction('a1')]);
    await fixture.whenStable();
    expect(byTestId('nav-actions-badge')?.textContent?.trim()).toBe(
      ', actions waiting: 1',
    );
    expect(byTestId('nav-actions-badge')?.getAttribute('title')).toBe(
      '1 action waits for your approval',
    );
    expect(byTestId('nav-accounts-badge')).toBeNull();
    expect(
      (byTestId('nav-actions') as HTMLAnchorElement).getAttribute('href'),
    ).toBe('/actions');

    events.events.next({
      name: 'actions.changed',
      data: {
        id: 'a1',
        change: 'done',
        chatId: null,
        at: '2026-11-28T10:01:00.000Z',
      },
    });
    http.expectOne('/api/actions?status=pending').flush([]);
    await fixture.whenStable();
    expect(byTestId('nav-actions-badge')).toBeNull();
  });

  it('marks the current page in the navigation', async () => {
    await router.navigateByUrl('/system');
    await fixture.whenStable();
    expect(byTestId('nav-system')?.getAttribute('aria-current')).toBe('page');
  });

  it('keeps the navigation beside the page on wide screens and behind a menu button on narrow ones', async () => {
    expect(el('.menu-button')).toBeNull();
    expect(el('mat-sidenav')?.classList).toContain('mat-drawer-side');

    layout.next({ matches: false, breakpoints: {} });
    await fixture.whenStable();
    const menu = el('.menu-button');
    expect(menu).not.toBeNull();
    expect(el('mat-sidenav')?.classList).toContain('mat-drawer-over');
    expect(menu?.getAttribute('aria-expanded')).toBe('false');
    menu?.click();
    await fixture.whenStable();
    expect(menu?.getAttribute('aria-expanded')).toBe('true');
  });

  it('moves the shortcuts button from the toolbar into the menu on narrow screens', async () => {
    expect(byTestId('shortcuts-button')).not.toBeNull();
    expect(byTestId('nav-shortcuts')).toBeNull();

    layout.next({ matches: false, breakpoints: {} });
    await fixture.whenStable();
    expect(byTestId('shortcuts-button')).toBeNull();
    el('.menu-button')?.click();
    await fixture.whenStable();
    const item = byTestId('nav-shortcuts');
    expect(item?.textContent).toContain('Keyboard shortcuts');
    item?.click();
    await fixture.whenStable();
    expect(
      document.querySelector('mat-dialog-container')?.textContent,
    ).toContain('Keyboard shortcuts');
    expect(el('.menu-button')?.getAttribute('aria-expanded')).toBe('false');
  });

  it('reloads the console when a backup was restored anywhere, and says why after the reload', async () => {
    const pageReload = TestBed.inject(PageReload);
    const reload = jest
      .spyOn(pageReload, 'reload')
      .mockImplementation(() => undefined);
    events.events.next({
      name: 'backup.restored',
      data: { at: '2026-11-28T10:00:00.000Z', secrets: 'kept' },
    } as AppEvent);
    await fixture.whenStable();
    expect(reload).toHaveBeenCalledTimes(1);
    // The reloaded console reads the reason once, with what became of the keys.
    const restored = pageReload.takeRestored();
    expect(restored).toEqual({
      at: '2026-11-28T10:00:00.000Z',
      secrets: 'kept',
    });
    expect(pageReload.takeRestored()).toBeNull();
    expect(restoredNotice(restored as { at: string })).toBe(
      'A backup was restored: the console reloaded with its data. Your own API keys and tokens were kept (the backup held none, or its passphrase was not given).',
    );
    expect(restoredNotice({ at: 'x', secrets: 'restored' })).toContain(
      "The backup's API keys and tokens are in use.",
    );
    expect(restoredNotice({ at: 'x' })).toBe(
      'A backup was restored: the console reloaded with its data.',
    );
  });

  it('logs out on the server and goes to the login', async () => {
    const navigateByUrl = jest
      .spyOn(router, 'navigateByUrl')
      .mockResolvedValue(true);
    byTestId('logout-button')?.click();
    await fixture.whenStable();
    const req = http.expectOne('/api/auth/logout');
    expect(req.request.method).toBe('POST');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await fixture.whenStable();
    expect(TestBed.inject(AuthStore).authenticated()).toBe(false);
    expect(navigateByUrl).toHaveBeenCalledWith('/login');
  });

  it('stays when the server cannot be reached for the logout', async () => {
    const navigateByUrl = jest
      .spyOn(router, 'navigateByUrl')
      .mockResolvedValue(true);
    byTestId('logout-button')?.click();
    await fixture.whenStable();
    http
      .expectOne('/api/auth/logout')
      .error(new ProgressEvent('error'), { status: 0 });
    await fixture.whenStable();
    expect(navigateByUrl).not.toHaveBeenCalled();
    expect((byTestId('logout-button') as HTMLButtonElement).disabled).toBe(
      false,
    );
  });

  it('drops a stale outage banner once the database reports it is up again', () => {
    const server = TestBed.inject(ServerStatus);
    server.report({
      kind: 'database',
      status: 503,
      title: 'The database is unavailable',
      message: 'm',
    });
    events.events.next({
      name: 'database.status',
      data: { status: 'down', at: '2026-01-01T00:00:00Z' },
    });
    expect(server.problem()).not.toBeNull();
    events.events.next({
      name: 'database.status',
      data: { status: 'up', at: '2026-01-01T00:00:09Z' },
    });
    expect(server.problem()).toBeNull();
  });

  it('re-checks the session when some session logs out, and leaves only if ours is gone', async () => {
    const navigateByUrl = jest
      .spyOn(router, 'navigateByUrl')
      .mockResolvedValue(true);

    events.events.next({
      name: 'auth.logged_out',
      data: { at: '2026-01-01T00:00:00Z' },
    });
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    expect(navigateByUrl).not.toHaveBeenCalled();

    events.events.next({
      name: 'auth.logged_out',
      data: { at: '2026-01-01T00:00:01Z' },
    });
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: false });
    expect(navigateByUrl).toHaveBeenCalledWith('/login');
  });
});
