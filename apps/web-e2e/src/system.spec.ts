import { expect, ownerSession, test } from './support/fixtures';

test.describe('System page', () => {
  test('shows version, uptime, the embedded database as up, and the data dir', async ({
    page,
    app,
  }) => {
    await ownerSession(page);
    await page.goto('/');
    await expect(page).toHaveURL(/\/chat$/);
    await page.getByTestId('nav-system').click();
    await expect(page).toHaveURL(/\/system$/);
    const info = await (await page.request.get('/api/system')).json();

    await expect(page.getByTestId('system-version')).toContainText(
      info.version,
    );
    await expect(page.getByTestId('system-db-kind')).toContainText(/embedded/i);
    await expect(page.getByTestId('system-db-status')).toHaveText('Up');
    await expect(page.getByTestId('system-data-dir')).toContainText(
      app.dataDir,
    );
    await expect(page.getByTestId('system-uptime')).not.toBeEmpty();

    await page.getByTestId('system-refresh').click();
    await expect(page.getByTestId('system-db-status')).toHaveText('Up');
  });

  test('shows a clear error with a retry when the server cannot be reached', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/system');
    await expect(page.getByTestId('system-version')).toBeVisible();
    await page.route('**/api/**', (route) => route.abort('connectionrefused'));
    await page.reload();
    await expect(page.getByTestId('api-error')).toBeVisible();
    await page.unroute('**/api/**');
    await page.getByTestId('api-error-retry').click();
    await expect(page.getByTestId('system-version')).toBeVisible();
  });
});
