import { test as base, expect, type Page } from '@playwright/test';
import { startApp, type RunningApp } from './app-server';

export const OWNER_PASSWORD = 'e2e owner password';

interface WorkerFixtures {
  /** Extra environment for the server (e.g. fake upstream base URLs). */
  appEnv: Record<string, string>;
  /**
   * Files that set their own `appName` get a MetatronOS of their own (Playwright
   * starts a new worker for different worker options); others share one.
   */
  appName: string;
  app: RunningApp;
}

/** A MetatronOS per worker, on a free port with a fresh data dir; `baseURL` points at it. */
export const test = base.extend<object, WorkerFixtures>({
  appEnv: [{}, { scope: 'worker', option: true }],
  appName: ['shared', { scope: 'worker', option: true }],
  app: [
    async ({ appEnv }, use) => {
      const app = await startApp({ env: appEnv });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ app }, use) => use(app.baseURL),
});

export { expect };

/**
 * Gives the page's browser context an owner session through the API (first-run
 * setup when there is no owner yet, login otherwise); `page.request` shares its cookies.
 */
export async function ownerSession(
  page: Page,
  password = OWNER_PASSWORD,
): Promise<void> {
  const setup = await page.request.post('/api/auth/setup', {
    data: { password },
  });
  if (setup.status() === 201) return;
  expect(setup.status()).toBe(409);
  const login = await page.request.post('/api/auth/login', {
    data: { password },
  });
  expect(login.status()).toBe(200);
}

export async function logIn(
  page: Page,
  password = OWNER_PASSWORD,
): Promise<void> {
  await page.goto('/login');
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
}
