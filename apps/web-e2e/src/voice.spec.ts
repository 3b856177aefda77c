import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import {
  startFakeRealtimeServer,
  type FakeControl,
  type FakeRealtimeServer,
} from '../../../tools/fake-realtime/fake-realtime-server';
import {
  startApp,
  WORKSPACE_ROOT,
  type RunningApp,
} from './support/app-server';
import { test as base, expect, ownerSession } from './support/fixtures';

// Issue 26: the whole voice path in Chromium. A fake microphone plays a WAV spoken by
// espeak-ng; the console sends its offer to the API, which calls the fake OpenAI
// Realtime (a werift peer that answers and sends audio back) and runs the call's
// tools on the server. Chromium gets the fake-microphone flags in this file only.

const OPENAI_KEY = 'sk-e2e-voice-key-1234';
const SPOKEN = 'turn on the todo mode';
const TELEGRAM_TOKEN = '123456:E2E-voice-token-abcdefghij';

const test = base.extend<
  object,
  {
    realtime: FakeRealtimeServer;
    telegram: FakeTelegramServer;
    app: RunningApp;
    ownerWav: string;
  }
>({
  ownerWav: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const dir = join(WORKSPACE_ROOT, 'dist/.playwright/voice');
      mkdirSync(dir, { recursive: true });
      const wav = join(dir, 'owner.wav');
      // espeak-ng must be there (tools/scripts/setup.sh installs it): no silent skip.
      execFileSync('espeak-ng', ['-s', '150', '-w', wav, SPOKEN]);
      expect(statSync(wav).size).toBeGreaterThan(10_000);
      await use(wav);
    },
    { scope: 'worker' },
  ],
  launchOptions: [
    async ({ launchOptions, ownerWav }, use) =>
      use({
        ...launchOptions,
        args: [
          ...(launchOptions.args ?? []),
          '--use-fake-device-for-media-stream',
          '--use-fake-ui-for-media-stream',
          `--use-file-for-fake-audio-capture=${ownerWav}`,
          // The fake provider listens on 127.0.0.1 only; Chromium leaves loopback out of ICE otherwise.
          '--allow-loopback-in-peer-connection',
          // Real addresses, not mDNS names: nothing is sent to a multicast group.
          '--disable-features=WebRtcHideLocalIpsWithMdns',
        ],
      }),
    { scope: 'worker' },
  ],
  realtime: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const fake = await startFakeRealtimeServer();
      await use(fake);
      await fake.close();
    },
    { scope: 'worker' },
  ],
  telegram: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const telegram = await startFakeTelegram({ tokens: [TELEGRAM_TOKEN] });
      await use(telegram);
      await telegram.close();
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ realtime }, use) => {
      const app = await startApp({
        env: { OPENAI_BASE_URL: realtime.baseUrl },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'voice' });
test.describe.configure({ mode: 'serial' });

test.afterEach(async ({ realtime }) => realtime.reset());

async function openChat(page: Page): Promise<string> {
  await ownerSession(page);
  expect(
    (
      await page.request.patch('/api/settings', {
        data: { openaiApiKey: OPENAI_KEY },
      })
    ).status(),
  ).toBe(200);
  const created = await page.request.post('/api/chats', { data: {} });
  const chatId = ((await created.json()) as { id: string }).id;
  await page.goto(`/chat/${chatId}`);
  return chatId;
}

/** Presses the microphone and waits for the call to reach the fake provider and its control channel. */
async function call(
  page: Page,
  realtime: FakeRealtimeServer,
): Promise<FakeControl> {
  await page.getByTestId('mic-button').click();
  await expect(page.getByTestId('call-bar')).toBeVisible();
  await expect.poll(() => realtime.calls.length).toBe(1);
  return realtime.control(realtime.calls[0].callId);
}

test('microphone → fake provider → tool on the server → words in the chat → audio played → hang-up', async ({
  page,
  realtime,
}) => {
  const chatId = await openChat(page);
  const control = await call(page, realtime);
  const [offered] = realtime.calls;
  // The server called with the owner's key; the browser never had it.
  expect(offered.apiKey).toBe(OPENAI_KEY);
  expect(offered.sdp).toMatch(/^m=audio /m);
  expect(offered.session).toMatchObject({
    type: 'realtime',
    model: 'gpt-realtime',
  });
  await expect(page.getByTestId('call-state')).toHaveText('Listening', {
    timeout: 15_000,
  });

  // The WAV from the fake microphone reaches the provider, and the level meter shows it.
  await expect
    .poll(() => realtime.peers[0]?.audioPacketsReceived ?? 0, {
      timeout: 10_000,
    })
    .toBeGreaterThan(25);
  await expect
    .poll(
      () =>
        page
          .locator('.level-fill')
          .evaluate((el) => parseFloat((el as HTMLElement).style.width) || 0),
      { timeout: 10_000 },
    )
    .toBeGreaterThan(0);
  // The provider's audio plays in the page.
  await expect(page.getByTestId('call-bar')).toHaveAttribute(
    'data-audio',
    'playing',
    { timeout: 10_000 },
  );
  expect(realtime.peers[0].audioPacketsSent).toBeGreaterThan(0);

  // The model asks for the todo mode: the server runs set_mode and loads the mode's tools.
  control.send({
    type: 'input_audio_buffer.speech_started',
    item_id: 'item_owner_1',
  });
  control.announceFunctionCall({
    callId: 'call_mode',
    name: 'set_mode',
    arguments: { mode: 'todo' },
    responseId: 'resp_1',
  });
  const output = await control.waitFor(
    (e) =>
      e['type'] === 'conversation.item.create' &&
      (e['item'] as { call_id?: string }).call_id === 'call_mode',
  );
  expect(JSON.parse((output['item'] as { output: string }).output)).toEqual(
    expect.objectContaining({ mode: 'todo' }),
  );
  const update = await control.waitFor((e) => e['type'] === 'session.update');
  expect(
    (update['session'] as { tools: Array<{ name: string }> }).tools.map(
      (t) => t.name,
    ),
  ).toContain('todo_update');
  await control.waitFor((e) => e['type'] === 'response.create');
  expect(
    control.received.filter(
      (e) =>
        e['type'] === 'conversation.item.create' &&
        (e['item'] as { call_id?: string }).call_id === 'call_mode',
    ),
  ).toHaveLength(1);

  // Every word in the chat, live (no reload).
  control.send({ type: 'response.created', response: { id: 'resp_2' } });
  control.send({
    type: 'response.output_audio_transcript.done',
    response_id: 'resp_2',
    item_id: 'item_said_1',
    transcript: 'The todo mode is on.',
  });
  control.send({
    type: 'response.done',
    response: {
      id: 'resp_2',
      output: [],
      usage: { input_tokens: 40, output_tokens: 12, total_tokens: 52 },
    },
  });
  control.send({
    type: 'conversation.item.input_audio_transcription.completed',
    item_id: 'item_owner_1',
    transcript: 'Turn on the todo mode.',
  });
  await expect(page.getByTestId('user-text').last()).toHaveText(
    'Turn on the todo mode.',
  );
  const answer = page.getByTestId('assistant-message').last();
  await expect(answer).toContainText('The todo mode is on.');
  await expect(answer.getByTestId('mode-event')).toContainText(/todo/i);

  // Hang-up ends it at the provider and in the console.
  await page.getByTestId('call-hang-up').click();
  await expect(page.getByTestId('mic-button')).toBeVisible();
  await expect(page.getByTestId('call-bar')).toHaveCount(0);
  await expect.poll(() => offered.hungUp).toBe(true);
  await expect.poll(() => control.closed).toBe(true);
  const current = await page.request.get('/api/voice/calls/current');
  expect(await current.json()).toEqual({ call: null });

  // The words stay in the chat after a reload.
  await page.reload();
  await expect(page.getByTestId('user-text').last()).toHaveText(
    'Turn on the todo mode.',
  );
  const stored = await page.request.get(`/api/chats/${chatId}/messages`);
  const roles = ((await stored.json()) as Array<{ role: string }>).map(
    (m) => m.role,
  );
  expect(roles).toEqual(['user', 'assistant']);
});

test('at 390 px wide the call bar fits and its buttons work', async ({
  page,
  realtime,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await openChat(page);
  await call(page, realtime);
  const bar = page.getByTestId('call-bar');
  await expect(page.getByTestId('call-state')).toHaveText('Listening', {
    timeout: 15_000,
  });
  const box = await bar.boundingBox();
  expect(box).not.toBeNull();
  expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
  expect(
    await page.evaluate(() => document.documentElement.scrollWidth),
  ).toBeLessThanOrEqual(390);
  for (const id of ['call-mute', 'call-hang-up']) {
    const button = await page.getByTestId(id).boundingBox();
    expect(button).not.toBeNull();
    expect((button?.x ?? 0) + (button?.width ?? 0)).toBeLessThanOrEqual(390);
    expect(button?.height ?? 0).toBeGreaterThanOrEqual(24);
  }
  await page.getByTestId('call-mute').click();
  await expect(page.getByTestId('call-mute')).toHaveText('Unmute');
  await page.getByTestId('call-hang-up').click();
  await expect(page.getByTestId('mic-button')).toBeVisible();
  await expect.poll(() => realtime.calls[0].hungUp).toBe(true);
});

test('a send in a call waits in the call bar: Cancel drops it, Confirm runs it once', async ({
  page,
  realtime,
  telegram,
}) => {
  await openChat(page);
  // A connected channel makes contacts_send available (a send the call must not do unasked).
  expect(
    (
      await page.request.patch('/api/settings', {
        data: {
          telegramBotToken: TELEGRAM_TOKEN,
          telegramApiRoot: telegram.url,
        },
      })
    ).status(),
  ).toBe(200);
  await expect
    .poll(
      async () =>
        (
          (await (await page.request.get('/api/telegram/status')).json()) as {
            status: string;
          }
        ).status,
    )
    .toBe('connected');
  const control = await call(page, realtime);
  const bar = page.getByTestId('call-bar');

  const send = async (callId: string, text: string) => {
    control.announceFunctionCall({
      callId,
      name: 'contacts_send',
      arguments: { contact_id: 'tg:4242', message_text: text },
    });
    const output = await control.waitFor(
      (e) =>
        e['type'] === 'conversation.item.create' &&
        (e['item'] as { call_id?: string }).call_id === callId,
    );
    return JSON.parse((output['item'] as { output: string }).output) as {
      pending?: boolean;
      actionId: string;
    };
  };
  const status = async (id: string) =>
    (
      (await (await page.request.get(`/api/actions/${id}`)).json()) as {
        status: string;
      }
    ).status;

  const first = await send('call_send_1', 'Dinner at 8');
  expect(first.pending).toBe(true);
  await expect(bar.getByTestId('call-action-summary')).toContainText(
    'Dinner at 8',
  );
  await expect(bar.getByTestId('call-action')).toContainText(
    'Waits for your yes',
  );
  await bar.getByTestId('call-action-cancel').click();
  await expect(bar.getByTestId('call-action')).toHaveCount(0);
  expect(await status(first.actionId)).toBe('discarded');

  const second = await send('call_send_2', 'Dinner at 9');
  await expect(bar.getByTestId('call-action-summary')).toContainText(
    'Dinner at 9',
  );
  await bar.getByTestId('call-action-confirm').click();
  await expect(bar.getByTestId('call-action')).toHaveCount(0);
  // Ran once (the fake chat never allowed replies, so the send itself is refused: failed, not pending).
  await expect.poll(() => status(second.actionId)).not.toBe('pending');
  expect(await status(second.actionId)).toMatch(/^(done|failed)$/);
  expect(
    (
      await page.request.post(`/api/actions/${second.actionId}/approve`)
    ).status(),
  ).toBe(409);
  expect(telegram.sent.filter((m) => m['text'] === 'Dinner at 8')).toEqual([]);
  await page.getByTestId('call-hang-up').click();
});
