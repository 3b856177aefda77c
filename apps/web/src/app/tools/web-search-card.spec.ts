import { settingsView } from '../testing/settings-data';
import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type {
  AppSettingsView,
  WebSearchTestResponse,
} from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { WebSearchCard } from './web-search-card';

const SETTINGS: AppSettingsView = settingsView({
  geminiApiKey: '••••abcd',
  openaiApiKey: null,
  openaiCompatible: [],
  primaryModel: 'gemini-2.5-flash',
  imageModel: null,
  braveApiKey: null,
  timezone: 'Europe/Paris',
  urlFetchAllowHosts: [],
  authProfiles: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
});
const WITH_KEY: AppSettingsView = {
  ...SETTINGS,
  braveApiKey: '••••9876',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

describe('WebSearchCard', () => {
  let fixture: ComponentFixture<WebSearchCard>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const input = () =>
    el<HTMLInputElement>('brave-key-input') as HTMLInputElement;
  const button = (testId: string) =>
    el<HTMLButtonElement>(testId) as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(value: string): void {
    input().value = value;
    input().dispatchEvent(new Event('input'));
  }

  async function load(settings = SETTINGS): Promise<void> {
    fixture = TestBed.createComponent(WebSearchCard);
    await stable();
    http.expectOne('/api/settings').flush(settings);
    await stable();
  }

  async function runTest(outcome: WebSearchTestResponse): Promise<void> {
    button('web-search-test').click();
    await stable();
    const req = http.expectOne('/api/web-search/test');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({});
    req.flush(outcome);
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(WebSearchCard));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('without a key: says DuckDuckGo is in use and tests it', async () => {
    await load();
    expect(text('web-search-state')).toBe('DuckDuckGo (no key)');
    expect(text('brave-key-hint')).toBe('Not set.');
    expect(text('web-search-test-hint')).toBe(
      'Searches “MetatronOS” with DuckDuckGo.',
    );
    expect(button('web-search-save').disabled).toBe(true);
    await runTest({
      ok: true,
      engine: 'duckduckgo',
      results: 3,
      durationMs: 120,
      sample: null,
    });
    expect(text('web-search-outcome-summary')).toBe(
      'DuckDuckGo answered in 120 ms with 3 results.',
    );
  });

  it('saves a typed key with PATCH { braveApiKey } and then shows only its mask', async () => {
    await load();
    type('  BSA-new-key-0000009876 ');
    await stable();
    expect(text('web-search-test-hint')).toBe('Save the key to test it.');
    button('web-search-save').click();
    await stable();
    const req = http.expectOne('/api/settings');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ braveApiKey: 'BSA-new-key-0000009876' });
    req.flush(WITH_KEY);
    await stable();
    expect(input().value).toBe('');
    expect(text('brave-key-hint')).toContain('Saved: ••••9876');
    expect(text('web-search-state')).toBe('Brave Search');
    expect(button('web-search-test').disabled).toBe(false);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Brave Search key saved.');
  });

  it('never sends the mask back as a key', async () => {
    await load(WITH_KEY);
    type('••••9876');
    await stable();
    expect(button('web-search-save').disabled).toBe(true);
  });

  it('removes the key with null', async () => {
    await load(WITH_KEY);
    el('brave-key-remove')?.click();
    await stable();
    expect(button('web-search-test').disabled).toBe(true);
    button('web-search-save').click();
    await stable();
    const req = http.expectOne('/api/settings');
    expect(req.request.body).toEqual({ braveApiKey: null });
    req.flush({ ...SETTINGS, updatedAt: '2026-01-03T00:00:00.000Z' });
    await stable();
    expect(text('web-search-state')).toBe('DuckDuckGo (no key)');
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Brave Search key removed.');
  });

  it('shows a failed save inline and keeps the edit', async () => {
    await load();
    type('BSA-key');
    await stable();
    button('web-search-save').click();
    await stable();
    http.expectOne('/api/settings').flush(
      {
        statusCode: 400,
        message: ['braveApiKey must be a string'],
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('web-search-save-error')).toContain(
      'braveApiKey must be a string',
    );
    expect(input().value).toBe('BSA-key');
  });

  it('tests the saved key and shows the count and the first result as a link', async () => {
    await load(WITH_KEY);
    await runTest({
      ok: true,
      engine: 'brave',
      results: 5,
      durationMs: 240,
      sample: {
        title: 'MetatronOS on GitHub',
        url: 'https://example.com/metatron',
      },
    });
    expect(el('web-search-outcome')?.dataset['outcome']).toBe('ok');
    expect(text('web-search-outcome-summary')).toBe(
      'Brave answered in 240 ms with 5 results.',
    );
    const link = el<HTMLAnchorElement>(
      'web-search-sample',
    ) as HTMLAnchorElement;
    expect(link.textContent?.trim()).toBe('MetatronOS on GitHub');
    expect(link.href).toBe('https://example.com/metatron');
    expect(link.target).toBe('_blank');
    expect(link.rel).toBe('noopener noreferrer');
  });

  it('says so when Brave found nothing', async () => {
    await load(WITH_KEY);
    await runTest({
      ok: true,
      engine: 'brave',
      results: 0,
      durationMs: 90,
      sample: null,
    });
    expect(text('web-search-outcome-summary')).toBe(
      'Brave answered in 90 ms with 0 results.',
    );
    expect(el('web-search-sample')).toBeNull();
  });

  it("shows Brave's refusal, and a refused test request", async () => {
    await load(WITH_KEY);
    const error =
      'The Brave Search key was refused (HTTP 401). Check the key on the Tools page.';
    await runTest({ ok: false, engine: 'brave', error, durationMs: 50 });
    expect(el('web-search-outcome')?.dataset['outcome']).toBe('error');
    expect(el('web-search-outcome')?.getAttribute('role')).toBe('alert');
    expect(text('web-search-outcome-summary')).toBe(error);

    button('web-search-test').click();
    await stable();
    http.expectOne('/api/web-search/test').flush(
      {
        statusCode: 400,
        message: 'No Brave Search API key is configured: save one first.',
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('web-search-outcome-summary')).toBe(
      'No Brave Search API key is configured: save one first.',
    );
  });

  it('follows a key change made elsewhere, unless there is an edit here', async () => {
    await load();
    events.emit('settings.updated', {
      updatedAt: WITH_KEY.updatedAt as string,
    });
    await stable();
    http.expectOne('/api/settings').flush(WITH_KEY);
    await stable();
    expect(text('brave-key-hint')).toContain('Saved: ••••9876');

    type('BSA-other');
    await stable();
    events.emit('settings.updated', { updatedAt: '2026-02-01T00:00:00.000Z' });
    await stable();
    http.expectNone('/api/settings');
    expect(input().value).toBe('BSA-other');
  });

  it('shows a load failure with Retry', async () => {
    fixture = TestBed.createComponent(WebSearchCard);
    await stable();
    http
      .expectOne('/api/settings')
      .flush(
        { statusCode: 500, message: 'boom', error: 'Internal Server Error' },
        { status: 500, statusText: 'Server Error' },
      );
    await stable();
    expect(root().textContent).toContain(
      "Couldn't load the web search settings",
    );
    expect(el('web-search-form')).toBeNull();
  });
});
