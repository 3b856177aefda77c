import { OWNER_PASSWORD, expect, logIn, test } from './support/fixtures';

// One owner, one story, on a server of its own that starts with no owner:
// each step builds on the state the previous one left.
test.use({ appName: 'first-run' });
test.describe.configure({ mode: 'serial' });

test.describe('owner access', () => {
  test('first visit asks for a password, refuses a mismatch, then sets it up and opens the console', async ({
    page,
  }) => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/setup$/);

    await page.getByTestId('setup-password').fill(OWNER_PASSWORD);
    await page.getByTestId('setup-confirm').fill('something else');
    await expect(page.getByTestId('setup-submit')).toBeDisabled();

    await page.getByTestId('setup-confirm').fill(OWNER_PASSWORD);
    await page.getByTestId('setup-submit').click();

    // Then "Connect a model", which can wait.
    await expect(page.getByTestId('connect-form')).toBeVisible();
    await page.getByTestId('connect-skip').click();
    await expect(page).toHaveURL(/\/chat$/);
    await expect(page.getByTestId('app-toolbar')).toContainText('MetatronOS');
    await expect(page.getByTestId('new-chat')).toBeVisible();
  });

  test('the setup screen is gone once an owner exists', async ({ page }) => {
    await page.goto('/setup');
    await expect(page).not.toHaveURL(/\/setup$/);
  });

  test('logout ends the session: the console asks for the password again', async ({
    page,
  }) => {
    await logIn(page);
    await expect(page.getByTestId('new-chat')).toBeVisible();
    await page.getByTestId('logout-button').click();
    await expect(page).toHaveURL(/\/login/);

    await page.goto('/system');
    await expect(page).toHaveURL(/\/login/);
    const status = await page.request.get('/api/auth/status');
    expect(await status.json()).toEqual({
      ownerExists: true,
      authenticated: false,
    });
  });

  test('a wrong password is refused with a clear message', async ({ page }) => {
    await logIn(page, 'not the password');
    await expect(page.getByTestId('login-error')).toHaveText(/Wrong password/);
    await expect(page).toHaveURL(/\/login/);
    const status = await page.request.get('/api/auth/status');
    expect((await status.json()).authenticated).toBe(false);
  });

  test('the right password logs in and returns to the page asked for', async ({
    page,
  }) => {
    await page.goto('/system');
    await expect(page).toHaveURL(/\/login/);
    await page.getByTestId('login-password').fill(OWNER_PASSWORD);
    await page.getByTestId('login-submit').click();
    await expect(page).toHaveURL(/\/system$/);
  });
});
