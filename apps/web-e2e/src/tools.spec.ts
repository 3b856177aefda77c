import {
  fakeBraveResults,
  startFakeBraveServer,
  type FakeBraveServer,
} from '../../../tools/fake-brave/fake-brave-server';
import {
  fakeDuckDuckGoResults,
  startFakeDuckDuckGoServer,
  type FakeDuckDuckGoServer,
} from '../../../tools/fake-duckduckgo/fake-duckduckgo-server';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

const BRAVE_KEY = 'BSA-e2e-brave-key-00000004321';

/** A MetatronOS of its own whose Brave Search and DuckDuckGo base URLs are fakes started in the worker. */
const test = base.extend<
  object,
  { brave: FakeBraveServer; ddg: FakeDuckDuckGoServer; app: RunningApp }
>({
  brave: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const brave = await startFakeBraveServer();
      await use(brave);
      await brave.close();
    },
    { scope: 'worker' },
  ],
  ddg: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const ddg = await startFakeDuckDuckGoServer();
      await use(ddg);
      await ddg.close();
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ brave, ddg }, use) => {
      const app = await startApp({
        env: {
          BRAVE_SEARCH_BASE_URL: brave.baseUrl,
          DUCKDUCKGO_BASE_URL: ddg.url,
        },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'tools' });

test.describe('Tools', () => {
  test('web search: DuckDuckGo without a key; the owner saves a Brave key, tests it and sees the first result', async ({
    page,
    brave,
    ddg,
  }) => {
    await ownerSession(page);
    await page.goto('/chat');
    await page.getByTestId('nav-tools').click();
    await expect(page).toHaveURL(/\/tools$/);
    await expect(page).toHaveTitle('Tools · MetatronOS');

    const card = page.getByTestId('web-search-card');
    await expect(card.getByTestId('web-search-state')).toHaveText(
      'DuckDuckGo (no key)',
    );
    ddg.enqueue({ results: fakeDuckDuckGoResults('MetatronOS', 2) });
    await card.getByTestId('web-search-test').click();
    await expect(card.getByTestId('web-search-outcome-summary')).toContainText(
      /DuckDuckGo answered in \d+ ms with 2 results\./,
    );
    expect(ddg.requests.map((r) => r.q)).toEqual(['MetatronOS']);

    await card.getByTestId('brave-key-input').fill(BRAVE_KEY);
    await card.getByTestId('web-search-save').click();
    await expect(card.getByTestId('brave-key-hint')).toContainText(
      'Saved: ••••4321',
    );
    await expect(card.getByTestId('web-search-state')).toHaveText(
      'Brave Search',
    );
    expect(
      (await (await page.request.get('/api/settings')).json()).braveApiKey,
    ).toBe('••••4321');

    brave.enqueue({ results: fakeBraveResults('MetatronOS', 3) });
    await card.getByTestId('web-search-test').click();
    await expect(card.getByTestId('web-search-outcome')).toHaveAttribute(
      'data-outcome',
      'ok',
    );
    await expect(card.getByTestId('web-search-outcome-summary')).toContainText(
      'with 3 results',
    );
    const sample = card.getByTestId('web-search-sample');
    await expect(sample).toHaveText('MetatronOS – result 1');
    await expect(sample).toHaveAttribute(
      'href',
      'https://example.com/MetatronOS/1',
    );
    expect(brave.requests).toHaveLength(1);
    expect(brave.requests[0].token).toBe(BRAVE_KEY);
    expect(brave.requests[0].query['q']).toBe('MetatronOS');

    // A refused key shows Brave's reason instead.
    brave.enqueue({
      status: 401,
      detail: 'The provided subscription token is invalid.',
    });
    await card.getByTestId('web-search-test').click();
    await expect(card.getByTestId('web-search-outcome')).toHaveAttribute(
      'data-outcome',
      'error',
    );
    await expect(card.getByTestId('web-search-outcome-summary')).toHaveText(
      'The Brave Search key was refused (HTTP 401). Check the key on the Tools page.',
    );
    await expect(page.getByText(BRAVE_KEY)).toHaveCount(0);
  });

  test('fetch: the owner allows a home server and adds an auth profile whose value is never shown again', async ({
    page,
  }) => {
    const value = 'e2e-profile-secret-value-5566';
    await ownerSession(page);
    await page.goto('/tools');
    const card = page.getByTestId('url-fetch-card');
    await expect(card.getByText('None: only public addresses.')).toBeVisible();

    await card.getByTestId('url-fetch-add-host').click();
    await card.getByTestId('url-fetch-host-input').fill('NAS.local:8123');
    await card.getByTestId('url-fetch-add-profile').click();
    await card.getByTestId('url-fetch-profile-id').fill('home');
    await card
      .getByTestId('url-fetch-profile-prefix')
      .fill('http://nas.local:8123/api/');
    await card.getByTestId('url-fetch-profile-header').fill('X-Ha-Token');
    await card.getByTestId('url-fetch-profile-value').fill(value);
    await card.getByTestId('url-fetch-save').click();

    await expect(card.getByTestId('url-fetch-profile-value-hint')).toHaveText(
      'Saved: ••••5566. Leave empty to keep it.',
    );
    await expect(card.getByTestId('url-fetch-host-input')).toHaveValue(
      'nas.local:8123',
    );
    await expect(card.getByTestId('url-fetch-profile-value')).toHaveValue('');
    const settings = await (await page.request.get('/api/settings')).json();
    expect(settings.urlFetchAllowHosts).toEqual(['nas.local:8123']);
    expect(settings.authProfiles).toEqual([
      {
        id: 'home',
        urlPrefix: 'http://nas.local:8123/api/',
        header: 'X-Ha-Token',
        value: '••••5566',
      },
    ]);

    await page.reload();
    await expect(card.getByTestId('url-fetch-profile-id')).toHaveValue('home');
    expect(await page.content()).not.toContain(value);

    // A refused entry is explained inline and nothing changes.
    await card.getByTestId('url-fetch-add-host').click();
    await card.getByTestId('url-fetch-host-input').nth(1).fill('not a host');
    await card.getByTestId('url-fetch-save').click();
    await expect(card.getByTestId('url-fetch-save-error')).toContainText(
      'urlFetchAllowHosts[1] must be host:port',
    );
  });
});
