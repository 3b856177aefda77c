import { defineConfig, devices } from '@playwright/test';

/**
 * Browser tests of the built console served by the built API, in Debian's
 * Chromium (no browser download). Each worker boots its own MetatronOS on a
 * free port with a fresh data dir: see src/support/fixtures.ts.
 */
export default defineConfig({
  testDir: './src',
  outputDir: '../../dist/.playwright/web-e2e/test-output',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: true,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: [['list']],
  use: {
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
