import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { AuthStore } from './auth-store';
import { SetupPage } from './setup-page';

describe('SetupPage', () => {
  let fixture: ComponentFixture<SetupPage>;
  let http: HttpTestingController;
  let navigateByUrl: jest.SpyInstance;

  const el = <T extends HTMLElement>(testId: string) =>
    fixture.nativeElement.querySelector(
      `[data-testid="${testId}"]`,
    ) as T | null;
  const text = () => (fixture.nativeElement as HTMLElement).textContent ?? '';
  const submitButton = () => el<HTMLButtonElement>('setup-submit');

  async function fill(password: string, confirm: string): Promise<void> {
    for (const [id, value] of [
      ['setup-password', password],
      ['setup-confirm', confirm],
    ] as const) {
      const input = el<HTMLInputElement>(id);
      if (!input) throw new Error(`no ${id}`);
      input.value = value;
      input.dispatchEvent(new Event('input'));
      input.dispatchEvent(new Event('blur'));
    }
    await fixture.whenStable();
  }

  /** Submits the form directly, as pressing Enter would, even if the button is disabled. */
  async function forceSubmit(): Promise<void> {
    (fixture.nativeElement as HTMLElement)
      .querySelector('form')
      ?.dispatchEvent(new Event('submit', { cancelable: true }));
    await fixture.whenStable();
  }

  beforeEach(async () => {
    TestBed.configureTestingModule({
      imports: [SetupPage],
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
    fixture = TestBed.createComponent(SetupPage);
    await fixture.whenStable();
  });

  afterEach(() => http.verify());

  it('welcomes the owner and offers password-manager friendly fields', () => {
    expect(text()).toContain('Welcome to MetatronOS — set the owner password');
    expect(el('setup-password')?.getAttribute('autocomplete')).toBe(
      'new-password',
    );
    expect(el('setup-confirm')?.getAttribute('autocomplete')).toBe(
      'new-password',
    );
    expect(submitButton()?.disabled).toBe(true);
  });

  it('refuses a password shorter than 8 characters without asking the server', async () => {
    await fill('short', 'short');
    expect(submitButton()?.disabled).toBe(true);
    expect(text()).toContain('Use at least 8 characters (5/8).');
    await forceSubmit();
    http.expectNone('/api/auth/setup');
  });

  it('refuses passwords that do not match without asking the server', async () => {
    await fill('long-enough-1', 'long-enough-2');
    expect(submitButton()?.disabled).toBe(true);
    expect(text()).toContain('The passwords do not match.');
    await forceSubmit();
    http.expectNone('/api/auth/setup');
  });

  it('sets the password and opens the console', async () => {
    await fill('long-enough-1', 'long-enough-1');
    expect(submitButton()?.disabled).toBe(false);
    submitButton()?.click();
    await fixture.whenStable();
    expect(submitButton()?.disabled).toBe(true);
    const req = http.expectOne('/api/auth/setup');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ password: 'long-enough-1' });
    req.flush(
      { ownerExists: true, authenticated: true },
      { status: 201, statusText: 'Created' },
    );
    await fixture.whenStable();
    expect(navigateByUrl).toHaveBeenCalledWith('/chat');
    expect(TestBed.inject(AuthStore).authenticated()).toBe(true);
  });

  it('says an owner already exists on 409 and links to the login', async () => {
    await fill('long-enough-1', 'long-enough-1');
    submitButton()?.click();
    await fixture.whenStable();
    http.expectOne('/api/auth/setup').flush(
      {
        statusCode: 409,
        message: 'The owner password is already set; log in instead.',
      },
      { status: 409, statusText: 'Conflict' },
    );
    await fixture.whenStable();

    const error = el('setup-error');
    expect(error?.getAttribute('role')).toBe('alert');
    expect(error?.textContent).toContain('An owner already exists');
    expect(error?.querySelector('a')?.getAttribute('href')).toBe('/login');
    expect(navigateByUrl).not.toHaveBeenCalled();
    expect(submitButton()?.disabled).toBe(false);
  });

  it("shows the server's validation message inline", async () => {
    await fill('long-enough-1', 'long-enough-1');
    submitButton()?.click();
    await fixture.whenStable();
    http.expectOne('/api/auth/setup').flush(
      {
        statusCode: 400,
        message: ['password must be longer than or equal to 8 characters'],
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await fixture.whenStable();
    expect(el('setup-error')?.textContent).toContain(
      'password must be longer than or equal to 8 characters',
    );
  });
});
