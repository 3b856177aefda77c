import { settingsView } from '../testing/settings-data';
import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { AppSettingsView } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { UrlFetchCard } from './url-fetch-card';

const SETTINGS: AppSettingsView = settingsView({
  geminiApiKey: null,
  openaiApiKey: null,
  openaiCompatible: [],
  primaryModel: null,
  imageModel: null,
  braveApiKey: null,
  timezone: 'Europe/Paris',
  urlFetchAllowHosts: ['nas.local:8123'],
  authProfiles: [
    {
      id: 'github',
      urlPrefix: 'https://api.github.com/',
      header: 'Authorization',
      value: '••••7788',
    },
  ],
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('UrlFetchCard', () => {
  let fixture: ComponentFixture<UrlFetchCard>;
  let http: HttpTestingController;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const all = <T extends HTMLElement = HTMLInputElement>(testId: string) =>
    Array.from(root().querySelectorAll<T>(`[data-testid="${testId}"]`));
  const button = (testId: string) =>
    el<HTMLButtonElement>(testId) as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(input: HTMLInputElement, value: string): void {
    input.value = value;
    input.dispatchEvent(new Event('input'));
  }

  async function load(settings = SETTINGS): Promise<void> {
    fixture = TestBed.createComponent(UrlFetchCard);
    await stable();
    http.expectOne('/api/settings').flush(settings);
    await stable();
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(UrlFetchCard));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('shows the saved hosts and profiles; a profile value only by its mask', async () => {
    await load();
    expect(all('url-fetch-host-input').map((i) => i.value)).toEqual([
      'nas.local:8123',
    ]);
    expect(all('url-fetch-profile-id').map((i) => i.value)).toEqual(['github']);
    const [value] = all('url-fetch-profile-value');
    expect(value.value).toBe('');
    expect(value.type).toBe('password');
    expect(value.placeholder).toBe('••••7788 (unchanged)');
    expect(text('url-fetch-profile-value-hint')).toBe(
      'Saved: ••••7788. Leave empty to keep it.',
    );
    expect(button('url-fetch-save').disabled).toBe(true);
    expect(el('url-fetch-discard')).toBeNull();
  });

  it('saves hosts and profiles: a new value is sent, a kept one is omitted', async () => {
    await load();
    button('url-fetch-add-host').click();
    await stable();
    type(all('url-fetch-host-input')[1], ' printer.lan:631 ');
    button('url-fetch-add-profile').click();
    await stable();
    type(all('url-fetch-profile-id')[1], 'home');
    type(all('url-fetch-profile-prefix')[1], 'http://nas.local:8123/api/');
    type(all('url-fetch-profile-header')[1], 'X-Ha-Token');
    type(all('url-fetch-profile-value')[1], 'secret-home-token-1234');
    await stable();
    button('url-fetch-save').click();
    await stable();
    const req = http.expectOne('/api/settings');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      urlFetchAllowHosts: ['nas.local:8123', 'printer.lan:631'],
      authProfiles: [
        {
          id: 'github',
          urlPrefix: 'https://api.github.com/',
          header: 'Authorization',
        },
        {
          id: 'home',
          urlPrefix: 'http://nas.local:8123/api/',
          header: 'X-Ha-Token',
          value: 'secret-home-token-1234',
        },
      ],
    });
    req.flush({
      ...SETTINGS,
      urlFetchAllowHosts: ['nas.local:8123', 'printer.lan:631'],
      authProfiles: [
        ...SETTINGS.authProfiles,
        {
          id: 'home',
          urlPrefix: 'http://nas.local:8123/api/',
          header: 'X-Ha-Token',
          value: '••••1234',
        },
      ],
      updatedAt: '2026-01-02T00:00:00.000Z',
    });
    await stable();
    expect(all('url-fetch-profile-value').map((i) => i.value)).toEqual([
      '',
      '',
    ]);
    expect(root().textContent).not.toContain('secret-home-token-1234');
    expect(button('url-fetch-save').disabled).toBe(true);
  });

  it('warns when a saved profile’s prefix changes without a new value, and shows a refusal inline', async () => {
    await load();
    type(all('url-fetch-profile-prefix')[0], 'https://collector.example/');
    await stable();
    expect(text('url-fetch-profile-warning')).toContain(
      'The prefix changed from “https://api.github.com/”',
    );
    button('url-fetch-save').click();
    await stable();
    http.expectOne('/api/settings').flush(
      {
        statusCode: 400,
        message: [
          'authProfiles[0].value must be sent again because urlPrefix changed (from https://api.github.com/ to https://collector.example/)',
        ],
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('url-fetch-save-error')).toContain(
      'authProfiles[0].value must be sent again',
    );
    expect(all('url-fetch-profile-prefix')[0].value).toBe(
      'https://collector.example/',
    );
  });

  it('asks before leaving with unsaved edits, and Discard restores the saved lists', async () => {
    await load();
    const leave = () => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(leave()).toBe(false);
    button('url-fetch-host-remove').click();
    await stable();
    expect(all('url-fetch-host-input')).toEqual([]);
    expect(leave()).toBe(true);
    button('url-fetch-discard').click();
    await stable();
    expect(all('url-fetch-host-input').map((i) => i.value)).toEqual([
      'nas.local:8123',
    ]);
    expect(leave()).toBe(false);
  });
});
