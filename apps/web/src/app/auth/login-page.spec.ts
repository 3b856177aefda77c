import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { AuthStore } from './auth-store';
import { LoginPage } from './login-page';

describe('LoginPage', () => {
  let fixture: ComponentFixture<LoginPage>;
  let http: HttpTestingController;
  let navigateByUrl: jest.SpyInstance;

  const el = <T extends HTMLElement>(testId: string) =>
    fixture.nativeElement.querySelector(
      `[data-testid="${testId}"]`,
    ) as T | null;

  function type(value: string): void {
    const input = el<HTMLInputElement>('login-password');
    if (!input) throw new Error('no password field');
    input.value = value;
    input.dispatchEvent(new Event('input'));
  }

  async function submit(): Promise<void> {
    el<HTMLButtonElement>('login-submit')?.click();
    await fixture.whenStable();
  }

  beforeEach(async () => {
    TestBed.configureTestingModule({
      imports: [LoginPage],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
      ],
    });
    http = TestBed.inject(HttpTestingController);
    navigateByUrl = jest
      .spyOn(TestBed.inject(Router), 'navigateByUrl')
      .mockResolvedValue(true);
    fixture = TestBed.createComponent(LoginPage);
    await fixture.whenStable();
  });

  afterEach(() => http.verify());

  it('is a password-manager friendly password field', () => {
    const input = el<HTMLInputElement>('login-password');
    expect(input?.type).toBe('password');
    expect(input?.getAttribute('autocomplete')).toBe('current-password');
    expect(el('login-error')).toBeNull();
  });

  it('shows the server\'s "Wrong password" inline, clears the field and keeps focus there', async () => {
    type('not-the-password');
    await submit();
    const req = http.expectOne('/api/auth/login');
    expect(req.request.body).toEqual({ password: 'not-the-password' });
    req.flush(
      { statusCode: 401, message: 'Wrong password', error: 'Unauthorized' },
      { status: 401, statusText: 'Unauthorized' },
    );
    await fixture.whenStable();

    const error = el('login-error');
    expect(error?.textContent?.trim()).toBe('Wrong password');
    expect(error?.getAttribute('role')).toBe('alert');
    const input = el<HTMLInputElement>('login-password');
    expect(input?.value).toBe('');
    expect(document.activeElement).toBe(input);
    expect(navigateByUrl).not.toHaveBeenCalled();
  });

  it('shows how many tries are left from the third failure, until the next try', async () => {
    type('guess-one');
    await submit();
    http.expectOne('/api/auth/login').flush(
      {
        statusCode: 401,
        message: 'Wrong password',
        error: 'Unauthorized',
        attemptsLeft: 4,
        lockMinutes: 15,
      },
      { status: 401, statusText: 'Unauthorized' },
    );
    await fixture.whenStable();
    expect(el('login-warning')).toBeNull();

    type('guess-three');
    await submit();
    http.expectOne('/api/auth/login').flush(
      {
        statusCode: 401,
        message: 'Wrong password',
        error: 'Unauthorized',
        attemptsLeft: 2,
        lockMinutes: 15,
        warning: '2 tries left before a 15-minute lock.',
      },
      { status: 401, statusText: 'Unauthorized' },
    );
    await fixture.whenStable();
    expect(el('login-error')?.textContent?.trim()).toBe('Wrong password');
    expect(el('login-warning')?.textContent?.trim()).toBe(
      '2 tries left before a 15-minute lock.',
    );
    // Typing keeps the warning (it is about the next try) and clears the error.
    type('another');
    await fixture.whenStable();
    expect(el('login-error')).toBeNull();
    expect(el('login-warning')).not.toBeNull();

    await submit();
    http.expectOne('/api/auth/login').flush(
      {
        statusCode: 429,
        message: 'Too many failed login attempts. Try again in 15 minutes.',
        retryAfterMinutes: 15,
      },
      { status: 429, statusText: 'Too Many Requests' },
    );
    await fixture.whenStable();
    expect(el('login-warning')).toBeNull();
    expect(el('login-error')?.textContent).toContain(
      'Try again in 15 minutes.',
    );
  });

  it('shows the rate-limit message and keeps the typed password', async () => {
    type('maybe-right');
    await submit();
    http.expectOne('/api/auth/login').flush(
      {
        statusCode: 429,
        message: 'Too many failed login attempts. Try again in 15 minutes.',
      },
      { status: 429, statusText: 'Too Many Requests' },
    );
    await fixture.whenStable();
    expect(el('login-error')?.textContent).toContain(
      'Too many failed login attempts. Try again in 15 minutes.',
    );
    expect(el<HTMLInputElement>('login-password')?.value).toBe('maybe-right');
  });

  it('logs in and returns to the requested page', async () => {
    fixture.componentRef.setInput('returnUrl', '/system?x=1');
    await fixture.whenStable();
    type('right-password');
    await submit();
    expect(el<HTMLButtonElement>('login-submit')?.disabled).toBe(true); // no double submit while waiting
    http
      .expectOne('/api/auth/login')
      .flush({ ownerExists: true, authenticated: true });
    await fixture.whenStable();
    expect(navigateByUrl).toHaveBeenCalledWith('/system?x=1');
    expect(TestBed.inject(AuthStore).authenticated()).toBe(true);
  });

  it('ignores a foreign return URL', async () => {
    fixture.componentRef.setInput('returnUrl', '//evil.example/');
    type('right-password');
    await submit();
    http.expectOne('/api/auth/login').flush({});
    await fixture.whenStable();
    expect(navigateByUrl).toHaveBeenCalledWith('/chat');
  });

  it('goes to the setup when no owner exists (409)', async () => {
    type('whatever');
    await submit();
    http
      .expectOne('/api/auth/login')
      .flush(
        { statusCode: 409, message: 'No owner' },
        { status: 409, statusText: 'Conflict' },
      );
    await fixture.whenStable();
    expect(navigateByUrl).toHaveBeenCalledWith('/setup');
  });

  it('asks for a password instead of sending an empty one', async () => {
    await submit();
    http.expectNone('/api/auth/login');
    expect(el('login-error')?.textContent).toContain(
      'Enter the owner password.',
    );
  });
});
