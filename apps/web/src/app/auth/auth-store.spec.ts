import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { AuthStatus } from '@metatronos/shared-types';
import { AuthStore, destinationFor } from './auth-store';

describe('destinationFor', () => {
  it('sends a fresh install to the setup', () => {
    expect(destinationFor({ ownerExists: false, authenticated: false })).toBe(
      'setup',
    );
  });
  it('sends a logged-out browser to the login', () => {
    expect(destinationFor({ ownerExists: true, authenticated: false })).toBe(
      'login',
    );
  });
  it('lets the logged-in owner into the app', () => {
    expect(destinationFor({ ownerExists: true, authenticated: true })).toBe(
      'app',
    );
  });
});

describe('AuthStore', () => {
  let store: AuthStore;
  let http: HttpTestingController;

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(), provideHttpClientTesting()],
    });
    store = TestBed.inject(AuthStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  it('asks the server once and then answers from the cache', () => {
    const seen: AuthStatus[] = [];
    store.ensureStatus().subscribe((s) => seen.push(s));
    store.ensureStatus().subscribe((s) => seen.push(s)); // concurrent: shares the request
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: false });

    store.ensureStatus().subscribe((s) => seen.push(s));
    http.expectNone('/api/auth/status');
    expect(seen).toEqual([
      { ownerExists: true, authenticated: false },
      { ownerExists: true, authenticated: false },
      { ownerExists: true, authenticated: false },
    ]);
    expect(store.ownerExists()).toBe(true);
    expect(store.authenticated()).toBe(false);
  });

  it('asks again when refreshing', () => {
    store.ensureStatus().subscribe();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    store.ensureStatus(true).subscribe();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: false });
    expect(store.authenticated()).toBe(false);
  });

  it('keeps the status unknown when the server cannot be asked', () => {
    const errors: unknown[] = [];
    store.ensureStatus().subscribe({ error: (e: unknown) => errors.push(e) });
    http
      .expectOne('/api/auth/status')
      .error(new ProgressEvent('error'), { status: 0 });
    expect(errors).toHaveLength(1);
    expect(store.status()).toBeNull();
  });

  it('is logged in after a successful login, with the password in the body', () => {
    store.login('secret-pass').subscribe();
    const req = http.expectOne('/api/auth/login');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ password: 'secret-pass' });
    req.flush({ ownerExists: true, authenticated: true });
    expect(store.status()).toEqual({ ownerExists: true, authenticated: true });
  });

  it('is logged in after the setup; a 409 means the owner exists', () => {
    store.setupOwner('first-pass').subscribe();
    http
      .expectOne('/api/auth/setup')
      .flush({}, { status: 201, statusText: 'Created' });
    expect(store.status()).toEqual({ ownerExists: true, authenticated: true });

    store.markLoggedOut();
    store.setupOwner('again-pass').subscribe({ error: () => undefined });
    http
      .expectOne('/api/auth/setup')
      .flush(
        { statusCode: 409, message: 'exists' },
        { status: 409, statusText: 'Conflict' },
      );
    expect(store.status()).toEqual({ ownerExists: true, authenticated: false });
  });

  it('treats a 401 on logout as logged out', () => {
    let done = false;
    store.logout().subscribe({ complete: () => (done = true) });
    http
      .expectOne('/api/auth/logout')
      .flush(null, { status: 401, statusText: 'Unauthorized' });
    expect(done).toBe(true);
    expect(store.status()).toEqual({ ownerExists: true, authenticated: false });
  });

  it('stays logged in when logout fails for another reason', () => {
    store.login('secret-pass').subscribe();
    http.expectOne('/api/auth/login').flush({});
    store.logout().subscribe({ error: () => undefined });
    http
      .expectOne('/api/auth/logout')
      .error(new ProgressEvent('error'), { status: 0 });
    expect(store.authenticated()).toBe(true);
  });
});
