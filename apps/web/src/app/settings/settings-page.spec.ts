import { settingsView } from '../testing/settings-data';
import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { AppSettingsView } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { SettingsPage } from './settings-page';

const SETTINGS: AppSettingsView = settingsView({
  geminiApiKey: '••••abcd',
  openaiApiKey: null,
  openaiCompatible: [
    { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null },
  ],
  primaryModel: 'gemini-2.5-flash',
  imageModel: null,
  braveApiKey: '••••brav',
  timezone: 'Europe/Paris',
  urlFetchAllowHosts: [],
  authProfiles: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('SettingsPage', () => {
  let fixture: ComponentFixture<SettingsPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text } = testIdQueries(root);
  const input = (testId: string, scope?: ParentNode) =>
    el<HTMLInputElement>(testId, scope) as HTMLInputElement;
  const saveButton = () =>
    el<HTMLButtonElement>('save-settings') as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(field: HTMLInputElement, value: string): void {
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  async function load(settings = SETTINGS): Promise<void> {
    fixture = TestBed.createComponent(SettingsPage);
    await stable();
    http.expectOne('/api/settings').flush(settings);
    await stable();
  }

  async function save(): Promise<unknown> {
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/settings');
    expect(req.request.method).toBe('PATCH');
    return req.request.body;
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(SettingsPage));
  });

  afterEach(() => {
    // Each load asks the providers for their models (suggestions only).
    for (const req of http.match('/api/settings/models'))
      req.flush({ models: [], problems: [] });
    // The Connected agents card loads its own list (connected-agents-card.spec.ts tests it).
    http.match('/api/mcp/tokens');
    tearDownApiTest(http);
  });

  it('shows saved secrets only as their mask, with empty inputs, and the other values', async () => {
    await load();
    expect(el('settings-form')).not.toBeNull();
    const gemini = input('gemini-key-input');
    expect(gemini.value).toBe('');
    expect(gemini.type).toBe('password');
    expect(gemini.placeholder).toContain('••••abcd');
    expect(text('gemini-key-hint')).toContain('Saved: ••••abcd');
    expect(text('openai-key-hint')).toBe('Not set.');
    expect(el('openai-key-remove')).toBeNull();
    expect(input('endpoint-name').value).toBe('ollama');
    expect(input('endpoint-url').value).toBe('http://127.0.0.1:11434/v1');
    expect(input('primary-model-input').value).toBe('gemini-2.5-flash');
    expect(input('image-model-input').value).toBe('');
    expect(input('timezone-input').value).toBe('Europe/Paris');
    expect(saveButton().disabled).toBe(true);
  });

  it('offers model and time zone suggestions', async () => {
    await load();
    // The configured providers' own models come first.
    http.expectOne('/api/settings/models').flush({
      models: [{ id: 'gemini-2.5-pro', provider: 'gemini' }],
      problems: [],
    });
    await stable();
    const models = Array.from(
      root().querySelectorAll<HTMLOptionElement>(
        `#${input('primary-model-input').getAttribute('list')} option`,
      ),
    ).map((o) => o.value);
    expect(models[0]).toBe('gemini-2.5-pro');
    expect(models).toEqual(
      expect.arrayContaining(['gemini-2.5-flash', 'gpt-4.1-mini', 'ollama/']),
    );
    const zones = root().querySelectorAll<HTMLOptionElement>(
      `#${input('timezone-input').getAttribute('list')} option`,
    );
    expect(Array.from(zones).map((o) => o.value)).toContain('Europe/Paris');
    expect(text('primary-model-hint')).toContain('<endpoint>/<model>');
  });

  it("chooses the primary model from the providers' list, or any id through Other…", async () => {
    await load();
    http.expectOne('/api/settings/models').flush({
      models: [
        { id: 'gemini-2.5-flash', provider: 'gemini' },
        { id: 'gemini-2.5-pro', provider: 'gemini' },
      ],
      problems: [],
    });
    await stable();
    const select = el<HTMLSelectElement>(
      'primary-model-select',
    ) as HTMLSelectElement;
    const choose = async (value: string) => {
      select.value = value;
      select.dispatchEvent(new Event('change'));
      await stable();
    };
    expect(
      Array.from(select.options).map((o) => o.textContent?.trim()),
    ).toEqual([
      'gemini-2.5-flash',
      'gemini-2.5-pro',
      "Other (an endpoint's model, an id not listed)…",
    ]);
    expect(select.value).toBe('gemini-2.5-flash');
    // A listed model needs no free text.
    expect(el('primary-model-input')).toBeNull();

    await choose('gemini-2.5-pro');
    expect(el('primary-model-input')).toBeNull();
    expect(saveButton().disabled).toBe(false);

    const other = select.options[select.options.length - 1].value;
    await choose(other);
    expect(input('primary-model-input').value).toBe('gemini-2.5-pro');
    type(input('primary-model-input'), 'ollama/llama3');
    await stable();
    expect(select.value).toBe(other);
    expect(await save()).toEqual({ primaryModel: 'ollama/llama3' });
  });

  it('sends only what changed and confirms the save', async () => {
    await load();
    type(input('openai-key-input'), 'sk-live-123');
    type(input('primary-model-input'), 'gpt-4.1-mini');
    await stable();
    expect(text('unsaved-indicator')).toContain('Unsaved changes');
    expect(await save()).toEqual({
      openaiApiKey: 'sk-live-123',
      primaryModel: 'gpt-4.1-mini',
    });
  });

  it('switches "always confirm before sending or deleting", shown only when the server has the setting', async () => {
    await load();
    expect(el('always-confirm-toggle')).toBeNull();

    fixture.destroy();
    await load({ ...SETTINGS, alwaysConfirm: true });
    const toggle = el('always-confirm-toggle');
    expect(toggle?.textContent).toContain(
      'Always confirm before sending or deleting',
    );
    const box = toggle?.querySelector<HTMLButtonElement>(
      'button[role="switch"]',
    );
    expect(box?.getAttribute('aria-checked')).toBe('true');
    box?.click();
    await stable();
    expect(text('unsaved-indicator')).toContain('Unsaved changes');
    expect(await save()).toEqual({ alwaysConfirm: false });
  });

  it('applies the saved values and shows a snackbar', async () => {
    await load();
    type(input('openai-key-input'), 'sk-live-123');
    await stable();
    saveButton().click();
    await stable();
    http.expectOne('/api/settings').flush({
      ...SETTINGS,
      openaiApiKey: '••••-123',
      updatedAt: '2026-01-02T00:00:00.000Z',
    });
    await stable();
    expect(input('openai-key-input').value).toBe('');
    expect(text('openai-key-hint')).toContain('Saved: ••••-123');
    expect(el('unsaved-indicator')).toBeNull();
    expect(saveButton().disabled).toBe(true);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Settings saved.');
  });

  it('removes a secret with null, and can undo the removal', async () => {
    await load();
    el('brave-key-remove')?.click();
    await stable();
    expect(text('brave-key-hint')).toBe('Will be removed when you save.');
    expect(input('brave-key-input').disabled).toBe(true);
    el('brave-key-undo')?.click();
    await stable();
    expect(saveButton().disabled).toBe(true);

    el('gemini-key-remove')?.click();
    await stable();
    expect(await save()).toEqual({ geminiApiKey: null });
  });

  it('treats a pasted mask as unchanged', async () => {
    await load();
    type(input('gemini-key-input'), '••••abcd');
    await stable();
    expect(saveButton().disabled).toBe(true);
  });

  it('tests an endpoint as typed, with its stored key, and says in words what happened', async () => {
    await load();
    const row = all('endpoint-row')[0];
    (el('test-endpoint', row) as HTMLButtonElement).click();
    await stable();
    const req = http.expectOne('/api/settings/test');
    expect(req.request.method).toBe('POST');
    // No key was typed: the stored one (its mask) is used by the server, never sent back in clear.
    expect(req.request.body).toEqual({
      endpoint: {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: null,
      },
    });
    req.flush({
      ok: true,
      models: [
        { id: 'ollama/llama3', provider: 'openai-compatible' },
        { id: 'ollama/qwen', provider: 'openai-compatible' },
      ],
    });
    await stable();
    expect(text('endpoint-test-result', row)).toBe('Works: 2 models offered.');

    type(input('endpoint-url', row), 'http://127.0.0.1:9/v1');
    await stable();
    (el('test-endpoint', row) as HTMLButtonElement).click();
    await stable();
    http.expectOne('/api/settings/test').flush({
      ok: false,
      error: 'Nothing answers at http://127.0.0.1:9/v1 (connection refused).',
    });
    await stable();
    expect(text('endpoint-test-result', row)).toBe(
      'Nothing answers at http://127.0.0.1:9/v1 (connection refused).',
    );
  });

  it('adds and removes endpoint rows, checking them before saving', async () => {
    await load();
    el('add-endpoint')?.click();
    await stable();
    const rows = all('endpoint-row');
    expect(rows).toHaveLength(2);
    type(input('endpoint-name', rows[1]), 'lm studio');
    await stable();
    expect(rows[1].textContent).toContain('Letters, digits, - and _ only.');
    expect(rows[1].textContent).toContain('Enter the base URL.');
    expect(saveButton().disabled).toBe(true);

    type(input('endpoint-name', rows[1]), 'lmstudio');
    type(input('endpoint-url', rows[1]), 'http://box:1234/v1');
    type(input('endpoint-key-input', rows[1]), 'k-1');
    await stable();
    expect(saveButton().disabled).toBe(false);
    expect(await save()).toEqual({
      openaiCompatible: [
        { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null },
        { name: 'lmstudio', baseUrl: 'http://box:1234/v1', apiKey: 'k-1' },
      ],
    });
  });

  it('warns that renaming an endpoint drops its saved key unless it is entered again', async () => {
    await load({
      ...SETTINGS,
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: '••••okey',
        },
      ],
    });
    expect(el('endpoint-key-warning')).toBeNull();
    type(input('endpoint-name'), 'ollama2');
    await stable();
    expect(text('endpoint-key-warning')).toContain('Renamed from “ollama”');
    type(input('endpoint-key-input'), 'the-key');
    await stable();
    expect(el('endpoint-key-warning')).toBeNull();
  });

  it('warns before saving that a changed base URL needs the endpoint key again', async () => {
    await load({
      ...SETTINGS,
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: '••••okey',
        },
      ],
    });
    expect(el('endpoint-url-key-warning')).toBeNull();
    // The same address in another spelling keeps the key: no warning.
    for (const same of [
      'http://127.0.0.1:11434/v1/',
      'HTTP://127.0.0.1:11434/v1',
      'http://127.0.0.1:11434/v1 ',
    ]) {
      type(input('endpoint-url'), same);
      await stable();
      expect(el('endpoint-url-key-warning')).toBeNull();
    }
    for (const other of [
      'https://collector.example/v1',
      'http://127.0.0.1:11435/v1',
      'https://127.0.0.1:11434/v1',
      'http://127.0.0.1:11434/v2',
    ]) {
      type(input('endpoint-url'), other);
      await stable();
      expect(text('endpoint-url-key-warning')).toContain(
        'The base URL changed from “http://127.0.0.1:11434/v1”',
      );
    }
    type(input('endpoint-key-input'), 'the-key');
    await stable();
    expect(el('endpoint-url-key-warning')).toBeNull();
    expect(await save()).toEqual({
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v2',
          apiKey: 'the-key',
        },
      ],
    });
  });

  it('does not ask for a key again for an endpoint that had none', async () => {
    await load({
      ...SETTINGS,
      openaiCompatible: [
        { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null },
      ],
    });
    type(input('endpoint-url'), 'http://127.0.0.1:8080/v1');
    await stable();
    expect(el('endpoint-url-key-warning')).toBeNull();
  });

  it('removes an endpoint', async () => {
    await load();
    el('remove-endpoint')?.click();
    await stable();
    expect(all('endpoint-row')).toHaveLength(0);
    expect(await save()).toEqual({ openaiCompatible: [] });
  });

  it('warns when the primary model needs a key that is not set', async () => {
    await load();
    type(input('primary-model-input'), 'gpt-4.1-mini');
    await stable();
    expect(text('primary-model-hint')).toBe(
      'OpenAI models need an OpenAI API key.',
    );
    type(input('openai-key-input'), 'sk-1');
    await stable();
    expect(text('primary-model-hint')).toContain('Used for chats');
  });

  it('shows the 400 message from the API next to the form and keeps the edits', async () => {
    await load();
    type(input('timezone-input'), 'Mars/Olympus');
    await stable();
    expect(text('timezone-hint')).toContain('does not know that zone');
    saveButton().click();
    await stable();
    http.expectOne('/api/settings').flush(
      {
        statusCode: 400,
        message: ['timezone must be a valid IANA time zone'],
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('settings-error')).toBe(
      'timezone must be a valid IANA time zone',
    );
    expect(input('timezone-input').value).toBe('Mars/Olympus');
  });

  it('requires a time zone', async () => {
    await load();
    type(input('timezone-input'), '  ');
    await stable();
    expect(text('timezone-hint')).toContain('Enter a time zone');
    expect(saveButton().disabled).toBe(true);
  });

  it('discards edits', async () => {
    await load();
    type(input('primary-model-input'), 'o4-mini');
    await stable();
    el('discard-settings')?.click();
    await stable();
    expect(input('primary-model-input').value).toBe('gemini-2.5-flash');
    expect(saveButton().disabled).toBe(true);
  });

  it('follows a change made elsewhere unless there are edits', async () => {
    await load();
    events.emit('settings.updated', { updatedAt: '2026-01-03T00:00:00.000Z' });
    await stable();
    http.expectOne('/api/settings').flush({
      ...SETTINGS,
      primaryModel: 'gemini-2.5-pro',
      updatedAt: '2026-01-03T00:00:00.000Z',
    });
    await stable();
    expect(input('primary-model-input').value).toBe('gemini-2.5-pro');

    type(input('image-model-input'), 'gpt-image-1');
    await stable();
    events.emit('settings.updated', { updatedAt: '2026-01-04T00:00:00.000Z' });
    await stable();
    http.expectNone('/api/settings');
    expect(input('image-model-input').value).toBe('gpt-image-1');
  });

  it('shows a load error with Retry', async () => {
    fixture = TestBed.createComponent(SettingsPage);
    await stable();
    http
      .expectOne('/api/settings')
      .flush(
        { statusCode: 500, message: 'Boom' },
        { status: 500, statusText: 'Error' },
      );
    await stable();
    expect(text('api-error')).toContain("Couldn't load the settings");
    expect(el('settings-form')).toBeNull();
    el('api-error-retry')?.click();
    await stable();
    http.expectOne('/api/settings').flush(SETTINGS);
    await stable();
    expect(el('settings-form')).not.toBeNull();
  });
});
