import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { Component } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import type { AuthStatus } from '@metatronos/shared-types';
import { ServerStatus } from '../core/server-status';
import {
  loginPageGuard,
  ownerSessionChildGuard,
  ownerSessionGuard,
  setupPageGuard,
} from './auth.guards';

@Component({ selector: 'mt-stub', template: '' })
class Stub {}

describe('auth guards', () => {
  let router: Router;
  let http: HttpTestingController;

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([
          { path: 'setup', canActivate: [setupPageGuard], component: Stub },
          { path: 'login', canActivate: [loginPageGuard], component: Stub },
          {
            path: '',
            canActivate: [ownerSessionGuard],
            canActivateChild: [ownerSessionChildGuard],
            children: [
              { path: '', pathMatch: 'full', redirectTo: 'chat' },
              { path: 'chat', component: Stub },
              { path: 'system', component: Stub },
              { path: 'other', component: Stub },
            ],
          },
        ]),
      ],
    });
    router = TestBed.inject(Router);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  const tick = () => new Promise((resolve) => setTimeout(resolve));

  /** Navigates, answers the status request and returns where the router ended up. */
  async function navigate(url: string, status: AuthStatus): Promise<string> {
    const done = router.navigateByUrl(url);
    await tick();
    http.expectOne('/api/auth/status').flush(status);
    await done;
    return router.url;
  }

  const NO_OWNER: AuthStatus = { ownerExists: false, authenticated: false };
  const LOGGED_OUT: AuthStatus = { ownerExists: true, authenticated: false };
  const LOGGED_IN: AuthStatus = { ownerExists: true, authenticated: true };

  it('sends every page to /setup while no owner exists', async () => {
    expect(await navigate('/system', NO_OWNER)).toBe('/setup');
    await router.navigateByUrl('/login');
    expect(router.url).toBe('/setup');
  });

  it('sends a logged-out browser to /login and remembers the requested page', async () => {
    expect(await navigate('/other?x=1', LOGGED_OUT)).toBe(
      '/login?returnUrl=%2Fother%3Fx%3D1',
    );
  });

  it('does not add a returnUrl for the home page', async () => {
    expect(await navigate('/', LOGGED_OUT)).toBe('/login');
  });

  it('lets the logged-in owner in, and keeps them away from /login and /setup', async () => {
    expect(await navigate('/', LOGGED_IN)).toBe('/chat');
    await router.navigateByUrl('/setup');
    expect(router.url).toBe('/chat');
    await router.navigateByUrl('/login?returnUrl=%2Fother');
    expect(router.url).toBe('/other');
  });

  it('allows /login for a logged-out browser and refuses /setup once the owner exists', async () => {
    expect(await navigate('/login', LOGGED_OUT)).toBe('/login');
    await router.navigateByUrl('/setup');
    expect(router.url).toBe('/login');
  });

  it('allows /setup on a fresh install', async () => {
    expect(await navigate('/setup', NO_OWNER)).toBe('/setup');
  });

  it('holds the navigation and reports the problem when the server cannot be reached', async () => {
    const done = router.navigateByUrl('/system');
    await tick();
    http
      .expectOne('/api/auth/status')
      .error(new ProgressEvent('error'), { status: 0 });
    expect(await done).toBe(false);

    const server = TestBed.inject(ServerStatus);
    expect(server.fullPage()).toBe(true);
    expect(server.blockedUrl()).toBe('/system');
    expect(server.problem()?.title).toBe("Can't reach the MetatronOS server");

    // Retry: the server answers now, and the held navigation resumes.
    server.retry();
    http.expectOne('/api/auth/status').flush(LOGGED_IN);
    await tick();
    expect(server.problem()).toBeNull();
    expect(router.url).toBe('/system');
  });
});
