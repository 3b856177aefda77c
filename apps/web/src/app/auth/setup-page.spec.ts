import { OwnerTime } from '../core/owner-time';
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

  it('sets the password, saves the browser’s time zone, and asks to connect a model', async () => {
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
    expect(TestBed.inject(AuthStore).authenticated()).toBe(true);
    const zone = http.expectOne('/api/settings');
    expect(zone.request.method).toBe('PATCH');
    expect(zone.request.body).toEqual({
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    });
    zone.flush({ timezone: 'Europe/Paris' });
    await fixture.whenStable();
    expect(text()).toContain('Connect a model');
    expect(navigateByUrl).not.toHaveBeenCalled();
  });

  describe('connect a model', () => {
    async function toConnectStep(): Promise<void> {
      await fill('long-enough-1', 'long-enough-1');
      submitButton()?.click();
      await fixture.whenStable();
      http
        .expectOne('/api/auth/setup')
        .flush({}, { status: 201, statusText: 'Created' });
      await fixture.whenStable();
      http.expectOne('/api/settings').flush({ timezone: 'Asia/Tokyo' });
      await fixture.whenStable();
    }
    const type = async (testId: string, value: string) => {
      const field = el<HTMLInputElement | HTMLSelectElement>(testId);
      if (!field) throw new Error(`no ${testId}`);
      field.value = value;
      field.dispatchEvent(
        new Event(field instanceof HTMLSelectElement ? 'change' : 'input'),
      );
      await fixture.whenStable();
    };
    const click = async (testId: string) => {
      el<HTMLButtonElement>(testId)?.click();
      await fixture.whenStable();
    };

    it('tests the key, lists the models, and saves key, model and zone together', async () => {
      await toConnectStep();
      expect(el<HTMLButtonElement>('connect-save')?.disabled).toBe(true);
      await type('connect-provider', 'openai');
      await type('connect-key', 'sk-good-key-1234');
      await click('connect-test');
      const test = http.expectOne('/api/settings/test');
      expect(test.request.body).toEqual({
        provider: 'openai',
        apiKey: 'sk-good-key-1234',
      });
      test.flush({
        ok: true,
        models: [
          { id: 'gpt-4.1', provider: 'openai' },
          { id: 'gpt-4.1-mini', provider: 'openai' },
        ],
      });
      await fixture.whenStable();
      await type('connect-model', 'gpt-4.1-mini');
      await click('connect-save');
      const save = http.expectOne('/api/settings');
      expect(save.request.body).toEqual({
        openaiApiKey: 'sk-good-key-1234',
        primaryModel: 'gpt-4.1-mini',
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      });
      save.flush({ timezone: 'Asia/Tokyo', primaryModel: 'gpt-4.1-mini' });
      await fixture.whenStable();
      // Straight into a new chat with its message box.
      expect(navigateByUrl).toHaveBeenCalledWith('/chat/new');
      expect(TestBed.inject(OwnerTime).primaryModel()).toBe('gpt-4.1-mini');
    });

    it('shows the server’s plain words when the key is refused, and saves nothing', async () => {
      await toConnectStep();
      await type('connect-key', 'AIza-wrong');
      await click('connect-test');
      http.expectOne('/api/settings/test').flush({
        ok: false,
        error:
          'Gemini refused the API key (400): check that it is copied whole and still active.',
      });
      await fixture.whenStable();
      expect(el('connect-error')?.textContent).toContain(
        'Gemini refused the API key',
      );
      expect(el<HTMLButtonElement>('connect-save')?.disabled).toBe(true);
    });

    it('tests an OpenAI-compatible server by its address, name and optional key', async () => {
      await toConnectStep();
      await type('connect-provider', 'endpoint');
      await type('connect-base-url', 'http://127.0.0.1:11434/v1');
      await type('connect-endpoint-name', 'ollama');
      await click('connect-test');
      const test = http.expectOne('/api/settings/test');
      expect(test.request.body).toEqual({
        endpoint: {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: null,
        },
      });
      test.flush({
        ok: true,
        models: [{ id: 'ollama/llama3', provider: 'openai-compatible' }],
      });
      await fixture.whenStable();
      expect(el<HTMLSelectElement>('connect-model')?.value).toBe(
        'ollama/llama3',
      );
    });

    it("shows a fresh install's spend caps", async () => {
      await toConnectStep();
      expect(el('setup-budget')?.textContent?.replace(/\s+/g, ' ')).toContain(
        'Spend caps start at $5.00 a day in total and $1.00 a day for jobs, Pulse and auto-replies',
      );
    });

    it('saves the connection with no caps when "No spend caps" is ticked', async () => {
      await toConnectStep();
      await type('connect-provider', 'openai');
      await type('connect-key', 'sk-good-key-1234');
      await click('connect-test');
      http.expectOne('/api/settings/test').flush({
        ok: true,
        models: [{ id: 'gpt-4.1-mini', provider: 'openai' }],
      });
      await fixture.whenStable();
      await type('connect-model', 'gpt-4.1-mini');
      await click('setup-no-caps');
      await click('connect-save');
      const save = http.expectOne('/api/settings');
      expect(save.request.body).toMatchObject({
        budget: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null },
      });
      save.flush({ timezone: 'Asia/Tokyo', primaryModel: 'gpt-4.1-mini' });
      await fixture.whenStable();
    });

    it('can be skipped', async () => {
      await toConnectStep();
      await click('connect-skip');
      expect(navigateByUrl).toHaveBeenCalledWith('/chat');
    });
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
