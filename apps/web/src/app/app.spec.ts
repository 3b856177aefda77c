import { settingsView } from './testing/settings-data';
import { provideHttpClient, withInterceptors } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import {
  Router,
  provideRouter,
  withComponentInputBinding,
} from '@angular/router';
import { App } from './app';
import { appRoutes } from './app.routes';
import { apiInterceptor } from './core/api.interceptor';
import {
  EVENT_SOURCE_FACTORY,
  type EventSourceLike,
} from './core/event-stream';

const noEvents = (): EventSourceLike => ({
  readyState: 0,
  onopen: null,
  onerror: null,
  addEventListener: () => undefined,
  close: () => undefined,
});

/** Boots the real root component and routes against a fake backend. */
describe('App', () => {
  let fixture: ComponentFixture<App>;
  let http: HttpTestingController;
  let router: Router;

  const byTestId = (id: string) =>
    (fixture.nativeElement as HTMLElement).querySelector(
      `[data-testid="${id}"]`,
    ) as HTMLElement | null;

  /**
   * Lets guards, lazy routes and change detection run. (Not `whenStable()`: an unanswered request keeps the
   * navigation, and so the app, unstable on purpose.)
   */
  async function settle(): Promise<void> {
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve));
      fixture.detectChanges();
    }
  }

  beforeEach(async () => {
    TestBed.configureTestingModule({
      imports: [App],
      providers: [
        provideHttpClient(withInterceptors([apiInterceptor])),
        provideHttpClientTesting(),
        provideRouter(appRoutes, withComponentInputBinding()),
        { provide: EVENT_SOURCE_FACTORY, useValue: noEvents },
      ],
    });
    http = TestBed.inject(HttpTestingController);
    router = TestBed.inject(Router);
    fixture = TestBed.createComponent(App);
    await fixture.whenStable();
  });

  afterEach(() => {
    // The shell follows the owner's time zone from the settings (one clock for every page).
    for (const req of http.match('/api/settings')) req.flush(settingsView());
    // …and counts the emails waiting for approval (a badge on Accounts).
    for (const req of http.match((r) => r.url === '/api/drafts')) req.flush([]);
    // …and the actions waiting for the owner (a badge on Pending actions).
    for (const req of http.match((r) => r.url === '/api/actions'))
      req.flush([]);
    http.verify();
  });

  it('sends a fresh install to the setup page', async () => {
    void router.navigateByUrl('/');
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: false, authenticated: false });
    await settle();
    expect(router.url).toBe('/setup');
    expect(byTestId('setup-password')).not.toBeNull();
    expect(document.title).toBe('Set up · MetatronOS');
  });

  it('opens the shell with the Chat page for the logged-in owner', async () => {
    void router.navigateByUrl('/');
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    await settle();
    expect(router.url).toBe('/chat');
    expect(byTestId('app-toolbar')).not.toBeNull();
    http.expectOne('/api/chats').flush([]);
    await settle();
    expect(byTestId('chat-empty-state')?.textContent).toContain(
      'Start a new chat',
    );
    expect(document.title).toBe('Chat · MetatronOS');
  });

  it('keeps the chat page when opening a chat from /chat, and shows the System page at /system', async () => {
    void router.navigateByUrl('/chat');
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    await settle();
    http.expectOne('/api/chats').flush([
      {
        id: 'c1',
        title: 'Hello',
        createdAt: 'x',
        updatedAt: 'x',
        running: false,
      },
    ]);
    await settle();
    const list = byTestId('chat-list');

    void router.navigateByUrl('/chat/c1');
    await settle();
    expect(byTestId('chat-list')).toBe(list); // same page instance: the list is not fetched again
    http.expectOne('/api/chats/c1/messages?limit=50').flush([]);
    await settle();
    expect(byTestId('chat-title')?.textContent?.trim()).toBe('Hello');

    void router.navigateByUrl('/system');
    await settle();
    http.expectOne('/api/system').flush({
      version: '0.1.0',
      uptimeSeconds: 5,
      database: { kind: 'embedded', status: 'up' },
      dataDir: '/d',
    });
    await settle();
    expect(byTestId('system-version')?.textContent?.trim()).toBe('0.1.0');
    expect(document.title).toBe('System · MetatronOS');
  });

  it('shows a not-found view inside the shell for unknown URLs', async () => {
    void router.navigateByUrl('/does-not-exist');
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    await settle();
    expect(byTestId('app-toolbar')).not.toBeNull();
    expect(fixture.nativeElement.textContent).toContain('Page not found');
  });

  it('shows a full-page error with Retry when the server cannot be reached, instead of a blank page', async () => {
    void router.navigateByUrl('/system');
    await settle();
    http
      .expectOne('/api/auth/status')
      .error(new ProgressEvent('error'), { status: 0 });
    await settle();

    const error = byTestId('api-error');
    expect(error?.textContent).toContain("Can't reach the MetatronOS server");
    expect(error?.getAttribute('role')).toBe('alert');
    expect(
      fixture.nativeElement.querySelector('mt-server-error')?.classList,
    ).toContain('full-page');

    byTestId('api-error-retry')?.click();
    await settle();
    http.expectOne('/api/auth/status').flush(
      {
        statusCode: 503,
        message: 'The database is unavailable. Check the server log.',
      },
      { status: 503, statusText: 'Service Unavailable' },
    );
    await settle();
    expect(byTestId('api-error')?.textContent).toContain(
      'The database is unavailable',
    );
    expect(byTestId('api-error')?.textContent).toContain(
      'Check the server log.',
    );

    byTestId('api-error-retry')?.click();
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: false });
    await settle();
    expect(byTestId('api-error')).toBeNull();
    // System is not the home page, so the login keeps it as the page to return to.
    expect(router.url).toBe('/login?returnUrl=%2Fsystem');
    expect(byTestId('login-password')).not.toBeNull();
  });

  it('shows a banner above the shell when a page request fails, and goes to the login on a 401', async () => {
    void router.navigateByUrl('/system');
    await settle();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    await settle();
    http
      .expectOne('/api/system')
      .error(new ProgressEvent('error'), { status: 502 });
    await settle();
    expect(byTestId('api-error')).not.toBeNull();
    expect(
      fixture.nativeElement.querySelector('mt-server-error')?.classList,
    ).toContain('banner');
    expect(byTestId('app-toolbar')).not.toBeNull();

    byTestId('system-refresh')?.click();
    await settle();
    http
      .expectOne('/api/system')
      .flush(
        { statusCode: 401, message: 'Unauthorized' },
        { status: 401, statusText: 'Unauthorized' },
      );
    await settle();
    expect(router.url).toBe('/login?returnUrl=%2Fsystem');
  });
});
