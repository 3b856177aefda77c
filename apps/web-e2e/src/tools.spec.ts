import {
  fakeBraveResults,
  startFakeBraveServer,
  type FakeBraveServer,
} from '../../../tools/fake-brave/fake-brave-server';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

const BRAVE_KEY = 'BSA-e2e-brave-key-00000004321';

/** A MetatronOS of its own whose Brave Search base URL is a fake started in the worker. */
const test = base.extend<object, { brave: FakeBraveServer; app: RunningApp }>({
  brave: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const brave = await startFakeBraveServer();
      await use(brave);
      await brave.close();
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ brave }, use) => {
      const app = await startApp({
        env: { BRAVE_SEARCH_BASE_URL: brave.baseUrl },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'tools' });

test.describe('Tools', () => {
  test('web search: the owner saves a Brave key, tests it and sees the first result', async ({
    page,
    brave,
  }) => {
    await ownerSession(page);
    await page.goto('/chat');
    await page.getByTestId('nav-tools').click();
    await expect(page).toHaveURL(/\/tools$/);
    await expect(page).toHaveTitle('Tools · MetatronOS');

    const card = page.getByTestId('web-search-card');
    await expect(card.getByTestId('web-search-state')).toHaveText(
      'Off: no key',
    );
    await expect(card.getByTestId('web-search-test')).toBeDisabled();

    await card.getByTestId('brave-key-input').fill(BRAVE_KEY);
    await card.getByTestId('web-search-save').click();
    await expect(card.getByTestId('brave-key-hint')).toContainText(
      'Saved: ••••4321',
    );
    await expect(card.getByTestId('web-search-state')).toHaveText('On');
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
});
