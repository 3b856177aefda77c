import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../../tools/fake-llm/fake-llm-server';
import { openSse, type SseEvent } from './sse';
import type { TestApp } from './test-app';

export const OPENAI_TEST_KEY = 'sk-test-openai-0000000000001234';
export const GEMINI_TEST_KEY = 'AIza-test-gemini-00000000005678';

/**
 * A fake provider upstream for a test file: points the SDKs' own base-URL
 * variables at it for the life of the file and restores them afterwards.
 */
export async function startFakeProviders(): Promise<
  FakeLlmServer & { restoreEnv(): void }
> {
  const fake = await startFakeLlmServer();
  const saved = {
    openai: process.env['OPENAI_BASE_URL'],
    gemini: process.env['GOOGLE_GEMINI_BASE_URL'],
  };
  process.env['OPENAI_BASE_URL'] = fake.openaiBaseUrl;
  process.env['GOOGLE_GEMINI_BASE_URL'] = fake.geminiBaseUrl;
  return Object.assign(fake, {
    restoreEnv() {
      for (const [name, value] of [
        ['OPENAI_BASE_URL', saved.openai],
        ['GOOGLE_GEMINI_BASE_URL', saved.gemini],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  });
}

/**
 * No spend caps: the caps are an explicit setting of each test. Specs about other
 * things run many replies and jobs whose worst cases would reach the default caps;
 * a budget spec sets its own caps and prices (prices stay the shipped ones here).
 */
export const NO_CAPS = {
  dailyUsd: null,
  monthlyUsd: null,
  unattendedDailyUsd: null,
} as const;

/**
 * Sets both keys and the model through the real settings API, with no spend caps (`budget` sets others).
 * "Always confirm" is switched off: these specs check what a tool does when it runs (a fresh install
 * has it on, which makes the owner's sends and deletions wait: see actions.spec.ts).
 */
export async function useModel(
  t: TestApp,
  primaryModel: string,
  budget: {
    dailyUsd?: number | null;
    monthlyUsd?: number | null;
    unattendedDailyUsd?: number | null;
  } = NO_CAPS,
): Promise<void> {
  const owner = await t.owner();
  await owner
    .patch('/api/settings')
    .send({
      openaiApiKey: OPENAI_TEST_KEY,
      geminiApiKey: GEMINI_TEST_KEY,
      primaryModel,
      alwaysConfirm: false,
      budget,
    })
    .expect(200);
}

export interface ChatClient {
  /** Sends a message (with more body fields, e.g. `allowOverBudget`) and returns the whole reply stream once it ended. */
  send(
    chatId: string,
    content: string,
    extra?: Record<string, unknown>,
  ): Promise<SseEvent[]>;
  open(
    chatId: string,
    content: string,
    extra?: Record<string, unknown>,
  ): ReturnType<typeof openSse>;
}

export async function chatClient(t: TestApp): Promise<ChatClient> {
  const { url, cookie } = await t.serve();
  const open = (
    chatId: string,
    content: string,
    extra: Record<string, unknown> = {},
  ) =>
    openSse(
      `${url}/api/chats/${chatId}/messages`,
      { Cookie: cookie },
      { method: 'POST', body: { ...extra, content } },
    );
  return {
    open,
    async send(chatId, content, extra) {
      const stream = await open(chatId, content, extra);
      if (stream.status !== 200)
        throw new Error(`send answered ${stream.status}`);
      return stream.rest();
    },
  };
}

export function eventsNamed(events: SseEvent[], name: string): unknown[] {
  return events.filter((e) => e.event === name).map((e) => e.data);
}
