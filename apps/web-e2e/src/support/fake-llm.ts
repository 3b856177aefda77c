import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../../tools/fake-llm/fake-llm-server';
import { startApp, type RunningApp } from './app-server';
import { test as base } from './fixtures';

export { expect, ownerSession } from './fixtures';

/**
 * `test` for files whose MetatronOS talks to a fake OpenAI/Gemini upstream (`fake`) started in the
 * test worker; the fake's script and recorded requests are reset after each test. Such a file sets
 * its own `appName`, so it gets a MetatronOS of its own.
 */
export const test = base.extend<
  { resetFake: void },
  { fake: FakeLlmServer; app: RunningApp }
>({
  fake: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const fake = await startFakeLlmServer();
      await use(fake);
      await fake.close();
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ fake }, use) => {
      const app = await startApp({
        env: {
          OPENAI_BASE_URL: fake.openaiBaseUrl,
          GOOGLE_GEMINI_BASE_URL: fake.geminiBaseUrl,
        },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
  resetFake: [
    async ({ fake }, use) => {
      await use();
      fake.reset();
    },
    { auto: true },
  ],
});
