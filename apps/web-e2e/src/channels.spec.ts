import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

const TOKEN = '123456:E2E-token-abcdefghijklmnop';

/** A MetatronOS of its own and a fake Telegram Bot API in the worker (the bot's server is set in the console). */
const test = base.extend<
  object,
  { telegram: FakeTelegramServer; app: RunningApp }
>({
  telegram: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const telegram = await startFakeTelegram({ tokens: [TOKEN] });
      await use(telegram);
      await telegram.close();
    },
    { scope: 'worker' },
  ],
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

test.use({ appName: 'channels' });

test.describe('Channels', () => {
  test('connects a Telegram bot, lists a stranger who wrote to it, and allows them in one click', async ({
    page,
    telegram,
  }) => {
    await ownerSession(page);
    await page.goto('/chat');
    await page.getByTestId('nav-channels').click();
    await expect(page).toHaveURL(/\/channels$/);
    await expect(page).toHaveTitle('Channels · MetatronOS');
    await expect(page.getByTestId('whatsapp-card')).toBeVisible();

    const card = page.getByTestId('telegram-card');
    await expect(card.getByTestId('telegram-state')).toHaveText(
      'Off: no bot token',
    );
    await card.getByTestId('telegram-token-input').fill(TOKEN);
    await card.getByTestId('telegram-root-input').fill(telegram.url);
    await card.getByTestId('telegram-save').click();
    await expect(card.getByTestId('telegram-state')).toHaveText(
      'Connected as @metatron_test_bot',
    );
    const settings = await (await page.request.get('/api/settings')).json();
    expect(settings.telegramBotToken).toBe('••••mnop');

    telegram.receive({
      chat: { id: 9999, type: 'private', first_name: 'Eve' },
      text: 'hello bot',
    });
    const messages = card.getByTestId('telegram-messages');
    await expect(messages).toContainText('hello bot');
    await expect(messages.getByTestId('telegram-message-state')).toHaveText(
      'Not allowed: no reply',
    );
    expect(telegram.sent).toEqual([]);

    await messages.getByTestId('telegram-allow').click();
    await expect(card.getByTestId('telegram-permissions')).toContainText('Eve');
    await expect(messages.getByTestId('telegram-allow')).toHaveCount(0);
    const permissions = await (
      await page.request.get('/api/telegram/permissions')
    ).json();
    expect(permissions).toMatchObject([
      { chatId: '9999', displayName: 'Eve', canRead: true, canReply: true },
    ]);
  });
});
