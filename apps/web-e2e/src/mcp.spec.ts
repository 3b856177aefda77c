import { join } from 'node:path';
import {
  startApp,
  WORKSPACE_ROOT,
  type RunningApp,
} from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';
import {
  startFakeAuthServer,
  startOAuthMcpServer,
} from '../../../tools/fake-oauth/fake-oauth-servers';

/** The SDK-built stdio MCP server of the API's tests. */
const STDIO_SERVER = join(
  WORKSPACE_ROOT,
  'apps/api/test/support/fake-mcp/stdio-server.cjs',
);

const test = base.extend<object, { app: RunningApp }>({
  app: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const app = await startApp();
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'mcp' });

test.describe('MCP servers card', () => {
  test('the owner adds a stdio server, sees it ready with every tool described, switches a tool off and deletes the server', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/tools');
    const card = page.getByTestId('mcp-card');
    await card.getByTestId('mcp-name').fill('fake');
    await card.getByTestId('mcp-command').fill(process.execPath);
    await card.getByTestId('mcp-args').fill(STDIO_SERVER);
    await card.getByTestId('mcp-add').click();

    const server = card.getByTestId('mcp-server-fake');
    await expect(server.getByTestId('mcp-status')).toHaveText(
      'ready: ready with 4 tools',
      { timeout: 20_000 },
    );
    const echo = server.getByTestId('mcp-tool-echo');
    await expect(echo).toContainText('fake_echo');
    await expect(echo).toContainText('Echo the text back');
    await echo.getByText('Schema', { exact: true }).click();
    await expect(echo.locator('pre')).toContainText('"text"');

    await echo.getByLabel('Enabled').uncheck();
    await page.reload();
    await expect(
      page.getByTestId('mcp-tool-echo').getByLabel('Enabled'),
    ).not.toBeChecked();

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('mcp-server-fake').getByTestId('mcp-delete').click();
    await expect(page.getByTestId('mcp-server-fake')).toHaveCount(0);
  });

  test('a refused address is said in words and nothing is added', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/tools');
    const card = page.getByTestId('mcp-card');
    await card.getByTestId('mcp-kind-http').check();
    await card.getByTestId('mcp-name').fill('home');
    await card.getByTestId('mcp-url').fill('http://10.0.0.7:8080/mcp');
    await card.getByTestId('mcp-add').click();
    await expect(card.getByTestId('mcp-add-error')).toContainText(
      'private address: add "10.0.0.7:8080" to allowHosts',
    );
    await expect(card.getByTestId('mcp-server-home')).toHaveCount(0);
  });

  test('a server behind OAuth needs sign-in; "Sign in" opens the authorization page in a new tab, and the server becomes ready', async ({
    page,
  }) => {
    const auth = await startFakeAuthServer();
    const mcp = await startOAuthMcpServer(auth, [auth.issuer]);
    try {
      await ownerSession(page);
      await page.goto('/tools');
      const card = page.getByTestId('mcp-card');
      await card.getByTestId('mcp-kind-http').check();
      await card.getByTestId('mcp-name').fill('signed');
      await card.getByTestId('mcp-url').fill(mcp.url);
      await card
        .getByTestId('mcp-allow-hosts')
        .fill(`127.0.0.1:${mcp.port}, 127.0.0.1:${auth.port}`);
      await card.getByTestId('mcp-add').click();

      const server = card.getByTestId('mcp-server-signed');
      await expect(server.getByTestId('mcp-status')).toHaveText(
        'needs sign-in: the server asks you to sign in (OAuth)',
        { timeout: 20_000 },
      );
      const popup = page.waitForEvent('popup');
      await server.getByTestId('mcp-sign-in').click();
      const tab = await popup;
      // The authorization server approves at once and sends the tab back to the console's callback.
      await expect(tab.locator('h1')).toHaveText('Signed in to signed', {
        timeout: 20_000,
      });
      expect(await tab.evaluate(() => window.opener)).toBeNull();
      await tab.close();

      await expect(server.getByTestId('mcp-status')).toHaveText(
        'ready: ready with 1 tool',
        { timeout: 20_000 },
      );
      await expect(server.getByTestId('mcp-tool-search')).toContainText(
        'signed_search',
      );
      await expect(server.getByTestId('mcp-oauth')).toContainText('token ••••');
      await expect(server.getByTestId('mcp-oauth')).not.toContainText(
        auth.issued.at(-1) as string,
      );

      await server.getByTestId('mcp-sign-out').click();
      await expect(server.getByTestId('mcp-status')).toHaveText(
        'needs sign-in: the server asks you to sign in (OAuth)',
        { timeout: 20_000 },
      );
    } finally {
      await mcp.close();
      await auth.close();
    }
  });
});
