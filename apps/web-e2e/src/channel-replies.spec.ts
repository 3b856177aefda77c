import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../tools/fake-llm/fake-llm-server';
import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

const TOKEN = '123456:E2E-token-abcdefghijklmnop';
const FAKE_SOCKET_MODULE = join(__dirname, 'support/fake-whatsapp-socket.cjs');

interface Files {
  scan: string;
  inbox: string;
  sent: string;
}

/**
 * Both channels against their fakes (Telegram Bot API, the Baileys socket) and a fake model, so an
 * auto-reply really runs: what the owner sees on the Channels page must be the same on both.
 */
const test = base.extend<
  object,
  {
    files: Files;
    telegram: FakeTelegramServer;
    llm: FakeLlmServer;
    app: RunningApp;
  }
>({
  files: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const dir = mkdtempSync(join(tmpdir(), 'metatron-e2e-channels-'));
      await use({
        scan: join(dir, 'scan'),
        inbox: join(dir, 'inbox'),
        sent: join(dir, 'sent'),
      });
      rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'worker' },
  ],
  telegram: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const telegram = await startFakeTelegram({ tokens: [TOKEN] });
      await use(telegram);
      await telegram.close();
    },
    { scope: 'worker' },
  ],
  llm: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const llm = await startFakeLlmServer();
      await use(llm);
      await llm.close();
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ files, llm }, use) => {
      const app = await startApp({
        env: {
          OPENAI_BASE_URL: llm.openaiBaseUrl,
          WHATSAPP_SOCKET_MODULE: FAKE_SOCKET_MODULE,
          FAKE_WHATSAPP_SCAN_FILE: files.scan,
          FAKE_WHATSAPP_INBOX_FILE: files.inbox,
          FAKE_WHATSAPP_SENT_FILE: files.sent,
        },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'channel-replies' });

async function useModel(page: Page): Promise<void> {
  const res = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-channels-key-1234',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(res.status()).toBe(200);
}

/** The stranger's message, Allow, the next message answered live: the same on both channels. */
async function allowThenAnswer(
  card: Locator,
  channel: 'telegram' | 'whatsapp',
  receive: (text: string) => void,
): Promise<void> {
  receive('who is this?');
  const messages = card.getByTestId(`${channel}-messages`);
  const stranger = messages.locator('li', { hasText: 'who is this?' });
  await expect(stranger.getByTestId(`${channel}-message-state`)).toHaveText(
    'Not allowed: no reply',
  );
  await stranger.getByTestId(`${channel}-allow`).click();
  await expect(messages.getByTestId(`${channel}-allow`)).toHaveCount(0);

  receive('what time is it?');
  const asked = messages.locator('li', { hasText: 'what time is it?' });
  // No reload: the state ends and the answer shows as the server announces them.
  await expect(asked.getByTestId(`${channel}-message-state`)).toHaveText(
    'Answered',
    { timeout: 15_000 },
  );
  await expect(asked.getByTestId(`${channel}-message-reply`)).toContainText(
    `It is ten, on ${channel}.`,
  );
}

test.describe('Channels answer the same way', () => {
  test('Telegram: Allow turns Read and Reply on; an auto-reply ends "Answering…" and shows its text live', async ({
    page,
    telegram,
    llm,
  }) => {
    await ownerSession(page);
    await useModel(page);
    await page.goto('/channels');
    const card = page.getByTestId('telegram-card');
    await card.getByTestId('telegram-token-input').fill(TOKEN);
    await card.getByTestId('telegram-root-input').fill(telegram.url);
    await card.getByTestId('telegram-save').click();
    await expect(card.getByTestId('telegram-state')).toHaveText(
      'Connected as @metatron_test_bot',
    );
    llm.openai.enqueue({ text: ['It is ten, on telegram.'] });
    await allowThenAnswer(card, 'telegram', (text) =>
      telegram.receive({
        chat: { id: 9999, type: 'private', first_name: 'Eve' },
        text,
      }),
    );
    expect(telegram.sent.map((m) => m['text'])).toEqual([
      'It is ten, on telegram.',
    ]);
    const permissions = await (
      await page.request.get('/api/telegram/permissions')
    ).json();
    expect(permissions).toMatchObject([
      { chatId: '9999', canRead: true, canReply: true, trusted: false },
    ]);
  });

  test('WhatsApp: a stranger is listed with Allow, which turns Read and Reply on; the auto-reply shows live', async ({
    page,
    files,
    llm,
  }) => {
    await ownerSession(page);
    await useModel(page);
    await page.goto('/channels');
    const card = page.getByTestId('whatsapp-card');
    await card.getByTestId('whatsapp-link').click();
    writeFileSync(files.scan, '14155550123');
    await expect(card.getByTestId('whatsapp-state')).toHaveText(
      /^Connected as/,
    );
    await expect(card.getByTestId('whatsapp-no-messages')).toBeVisible();

    llm.openai.enqueue({ text: ['It is ten, on whatsapp.'] });
    let n = 0;
    await allowThenAnswer(card, 'whatsapp', (text) =>
      writeFileSync(
        files.inbox,
        JSON.stringify([
          { id: `E2E${++n}`, from: '15550001111', name: 'Eve', text },
        ]),
      ),
    );
    await expect
      .poll(() =>
        existsSync(files.sent)
          ? readFileSync(files.sent, 'utf8').trim().split('\n')
          : [],
      )
      .toEqual([
        JSON.stringify({
          jid: '15550001111@s.whatsapp.net',
          text: 'It is ten, on whatsapp.',
        }),
      ]);
    const permissions = await (
      await page.request.get('/api/whatsapp/permissions')
    ).json();
    expect(permissions).toMatchObject([
      {
        phoneNumber: '15550001111',
        displayName: 'Eve',
        canRead: true,
        canReply: true,
        trusted: false,
      },
    ]);
  });
});
