import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { freePort, startApp } from './support/app-server';
import { OWNER_PASSWORD } from './support/fixtures';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'console-live' });

const SHOTS = join(__dirname, '../../../dist/screenshots/console-live');

/** The same view in light and dark, under dist/ (not committed). */
async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(SHOTS, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function useModel(page: Page): Promise<void> {
  const res = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-live-key-1234',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(res.status()).toBe(200);
}

async function newChat(page: Page, title: string): Promise<string> {
  const res = await page.request.post('/api/chats', { data: { title } });
  expect(res.status()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

test.describe('Live state', () => {
  test('a stopped server shows the offline banner within 5 s; when it is back the banner goes and the page reloads', async ({
    page,
  }) => {
    test.setTimeout(90_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'metatron-e2e-offline-'));
    const port = await freePort();
    let app = await startApp({ dataDir, port });
    const url = (path: string) => `${app.baseURL}${path}`;
    try {
      expect(
        (
          await page.request.post(url('/api/auth/setup'), {
            data: { password: OWNER_PASSWORD },
          })
        ).status(),
      ).toBe(201);
      const created = await page.request.post(url('/api/chats'), {
        data: { title: 'Before the outage' },
      });
      const { id } = (await created.json()) as { id: string };
      await page.goto(url(`/chat/${id}`));
      await expect(page.getByTestId('chat-title')).toHaveText(
        'Before the outage',
      );
      await expect(page.getByTestId('empty-thread')).toBeVisible();
      const banner = page.getByTestId('api-error');
      await expect(banner).toHaveCount(0);

      // The console sits idle; the server process stops.
      const reloads: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'GET')
          reloads.push(new URL(request.url()).pathname);
      });
      const stoppedAt = Date.now();
      await app.stop();
      await expect(banner).toBeVisible({ timeout: 5_000 });
      const shownAfterMs = Date.now() - stoppedAt;
      expect(shownAfterMs).toBeLessThan(5_000);
      console.log(
        `offline banner shown ${shownAfterMs} ms after the server stopped`,
      );
      await expect(banner).toContainText("Can't reach the MetatronOS server");
      await screenshots(page, 'offline-banner');

      // Back on the same port and data: the banner goes by itself, and the page reloads what it shows.
      reloads.length = 0;
      app = await startApp({ dataDir, port });
      const backAt = Date.now();
      await expect(banner).toHaveCount(0, { timeout: 10_000 });
      console.log(
        `banner gone ${Date.now() - backAt} ms after the server was back`,
      );
      await expect
        .poll(() => reloads)
        .toEqual(
          expect.arrayContaining([
            '/api/chats',
            `/api/chats/${id}/messages`,
            '/api/events',
          ]),
        );
      // Live again: a chat made now shows up (the event stream is back).
      await page.request.post(url('/api/chats'), {
        data: { title: 'After the outage' },
      });
      await expect(
        page
          .getByTestId('chat-item-title')
          .filter({ hasText: 'After the outage' }),
      ).toBeVisible();
      await expect(page.getByTestId('chat-title')).toHaveText(
        'Before the outage',
      );
    } finally {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

test.describe('A reply cut by a crash', () => {
  test('after the server is back, the open chat shows the stored reply once, with Retry and Edit, without a reload', async ({
    page,
    fake,
  }) => {
    test.setTimeout(90_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'metatron-e2e-crash-'));
    const port = await freePort();
    const env = {
      OPENAI_BASE_URL: fake.openaiBaseUrl,
      GOOGLE_GEMINI_BASE_URL: fake.geminiBaseUrl,
    };
    let app = await startApp({ dataDir, port, env });
    const url = (path: string) => `${app.baseURL}${path}`;
    try {
      expect(
        (
          await page.request.post(url('/api/auth/setup'), {
            data: { password: OWNER_PASSWORD },
          })
        ).status(),
      ).toBe(201);
      expect(
        (
          await page.request.patch(url('/api/settings'), {
            data: {
              openaiApiKey: 'sk-e2e-crash-key-1234',
              primaryModel: 'gpt-4.1-mini',
            },
          })
        ).status(),
      ).toBe(200);
      const created = await page.request.post(url('/api/chats'), {
        data: { title: 'Cut short' },
      });
      const { id } = (await created.json()) as { id: string };
      await page.goto(url(`/chat/${id}`));
      await expect(page.getByTestId('empty-thread')).toBeVisible();

      // The model sends one piece, then nothing: the reply is mid-stream when the server dies.
      fake.openai.enqueue({
        text: ['Half of the answer', ' never sent'],
        stallAfter: 1,
      });
      await page.getByTestId('composer-input').fill('Tell me everything');
      await page.getByTestId('composer-input').press('Enter');
      const replies = page.getByTestId('assistant-message');
      await expect(replies).toContainText('Half of the answer');
      await app.kill();
      await expect(page.getByTestId('assistant-error')).toContainText(
        'connection to the server was lost',
      );

      app = await startApp({ dataDir, port, env });
      // No reload: the console finds the server again and shows what is stored.
      await expect(page.getByTestId('api-error')).toHaveCount(0, {
        timeout: 15_000,
      });
      // Exactly what is stored: the reply as the restarted server closed it (the text written before the crash).
      const stored = (await (
        await page.request.get(url(`/api/chats/${id}/messages`))
      ).json()) as Array<{ id: string; role: string; status: string }>;
      expect(stored.map((m) => [m.role, m.status])).toEqual([
        ['user', 'complete'],
        ['assistant', 'error'],
      ]);
      await expect(replies).toHaveCount(1);
      await expect(replies).toHaveAttribute('data-message-id', stored[1].id);
      await expect(page.getByTestId('assistant-error')).toHaveCount(1);
      await expect(page.getByTestId('assistant-error')).toContainText(
        'interrupted because the server stopped',
      );
      await expect(
        page.getByText('connection to the server was lost'),
      ).toHaveCount(0);
      await expect(page.getByTestId('user-message')).toHaveCount(1);
      await expect(page.getByTestId('message-edit')).toBeVisible();
      await expect(page.getByTestId('message-retry')).toBeVisible();

      // Retry answers in the same place.
      fake.openai.enqueue({ text: ['The whole answer.'] });
      await page.getByTestId('message-retry').click();
      await expect(replies).toHaveCount(1);
      await expect(replies).toContainText('The whole answer.');
      await expect(page.getByTestId('message-regenerate')).toBeVisible();
    } finally {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

test.describe('WhatsApp link, live', () => {
  test('a dropped link says "Reconnecting to WhatsApp…" then connects again; a logout says to link again', async ({
    page,
  }) => {
    test.setTimeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'metatron-e2e-wa-live-'));
    const dataDir = join(dir, 'data');
    const closeFile = join(dir, 'close');
    // A saved session: the fake opens as this number without a QR.
    mkdirSync(join(dataDir, 'whatsapp-auth'), { recursive: true });
    writeFileSync(
      join(dataDir, 'whatsapp-auth', 'creds.json'),
      JSON.stringify({ phone: '14155550199' }),
    );
    const app = await startApp({
      dataDir,
      env: {
        WHATSAPP_SOCKET_MODULE: join(
          __dirname,
          'support/fake-whatsapp-socket.cjs',
        ),
        FAKE_WHATSAPP_CLOSE_FILE: closeFile,
      },
    });
    const url = (path: string) => `${app.baseURL}${path}`;
    try {
      await page.request.post(url('/api/auth/setup'), {
        data: { password: OWNER_PASSWORD },
      });
      await page.goto(url('/channels'));
      const card = page.getByTestId('whatsapp-card');
      const state = card.getByTestId('whatsapp-state');
      await expect(state).toHaveText('Connected as +14155550199');

      // The connection is lost: said at once, in words, without waiting for the 10 s poll.
      writeFileSync(closeFile, '408');
      await expect(state).toHaveText('Reconnecting to WhatsApp…', {
        timeout: 1_500,
      });
      await expect(card.getByTestId('whatsapp-reason')).toHaveText(
        /The connection to WhatsApp was lost/,
      );
      await expect(card.getByTestId('whatsapp-reconnect')).toBeVisible();
      await expect(card).not.toContainText('408');
      await expect(card.getByTestId('whatsapp-qr-waiting')).toHaveCount(0);
      await screenshots(page, 'whatsapp-reconnecting');
      // The retry (about 2 s later) gets through on its own.
      await expect(state).toHaveText('Connected as +14155550199', {
        timeout: 10_000,
      });
      await expect(card.getByTestId('whatsapp-reason')).toHaveCount(0);

      // Removed on the phone.
      writeFileSync(closeFile, '401');
      await expect(state).toHaveText('Logged out on the phone — link again', {
        timeout: 1_500,
      });
      await expect(card.getByTestId('whatsapp-link')).toBeEnabled();
      await screenshots(page, 'whatsapp-logged-out');
    } finally {
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.describe('Phone', () => {
  test.use({
    viewport: { width: 390, height: 844 },
    hasTouch: true,
    isMobile: true,
  });

  test('the message box stays usable while a reply streams: type the next message, Stop within reach', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await useModel(page);
    const chatId = await newChat(page, 'On the phone');
    fake.openai.enqueue(
      {
        text: Array.from(
          { length: 12 },
          (_, i) => `Part ${i + 1} of a long answer. `,
        ),
        chunkDelayMs: 400,
      },
      { text: ['Second answer.'] },
    );
    await page.goto(`/chat/${chatId}`);
    const input = page.getByTestId('composer-input');
    await input.fill('Tell me a long story');
    await input.press('Enter');

    const reply = page.getByTestId('assistant-message').last();
    await expect(reply).toContainText('Part 1');
    const stop = page.getByTestId('stop-button');
    await expect(stop).toBeVisible();
    await expect(stop).toBeInViewport();
    await expect(input).toBeEnabled();
    await expect(input).toBeInViewport();
    const box = await input.boundingBox();
    expect(box?.width).toBeGreaterThan(150);
    expect(box?.height).toBeGreaterThanOrEqual(38);
    await input.fill('And then?');
    await expect(input).toHaveValue('And then?');
    // Enter does not send while the reply runs; the text waits.
    await input.press('Enter');
    await expect(page.getByTestId('user-message')).toHaveCount(1);
    await expect(reply).toContainText('Part 3');
    await screenshots(page, 'phone-streaming');

    await stop.tap();
    await expect(page.getByTestId('stop-button')).toBeHidden({
      timeout: 10_000,
    });
    await expect(input).toHaveValue('And then?');
    await page.getByTestId('send-button').tap();
    await expect(page.getByTestId('user-message')).toHaveCount(2);
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      'Second answer.',
    );
  });
});

test.describe('Keyboard', () => {
  test('shortcuts: help with ?, new chat, search, message box; Escape closes dialogs and confirmations with focus back', async ({
    page,
  }) => {
    await ownerSession(page);
    await newChat(page, 'Groceries');
    await page.goto('/chat');
    await expect(page.getByTestId('chat-item')).not.toHaveCount(0);

    // Help, from the keyboard and from the toolbar; Escape closes it.
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(help).toBeVisible();
    await expect(help).toContainText('New chat');
    await expect(help).toContainText('Search the chats');
    await screenshots(page, 'shortcuts-help');
    await page.keyboard.press('Escape');
    await expect(help).toHaveCount(0);
    const button = page.getByTestId('shortcuts-button');
    await button.focus();
    await page.keyboard.press('Enter');
    await expect(help).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(help).toHaveCount(0);
    await expect(button).toBeFocused();

    // Search: Ctrl+K lands in the chat list (its search box when there is one).
    await page.keyboard.press('Control+k');
    await expect(page.locator('mt-chat-page aside :focus')).toHaveCount(1);

    // New chat from anywhere, even another page.
    await page.goto('/settings');
    await expect(page.getByTestId('save-settings')).toBeVisible();
    await page.keyboard.press('Alt+n');
    await expect(page).toHaveURL(/\/chat/);
    const input = page.getByTestId('composer-input');
    await expect(input).toBeVisible();

    // The message box: / from the page, Shift+Esc from anywhere.
    await page.getByTestId('chat-title').click();
    await page.keyboard.press('/');
    await expect(input).toBeFocused();
    await expect(input).toHaveValue('');
    await page.getByTestId('chat-title').click();
    await page.keyboard.press('Shift+Escape');
    await expect(input).toBeFocused();

    // Escape cancels the delete confirmation; the focus goes back to Delete.
    const row = page.getByTestId('chat-item').filter({ hasText: 'Groceries' });
    await row.hover();
    await row.getByTestId('delete-chat').click();
    await expect(row.getByTestId('cancel-delete-chat')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(row.getByTestId('delete-chat-confirm')).toHaveCount(0);
    await expect(row.getByTestId('delete-chat')).toBeFocused();
    // A visible focus ring on it.
    const outline = await row
      .getByTestId('delete-chat')
      .evaluate((el) => getComputedStyle(el).outlineStyle);
    expect(outline).toBe('solid');
  });

  test('Escape closes the permissions dialog and gives the focus back to its button', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/channels');
    const open = page.getByTestId('whatsapp-permissions');
    await open.click();
    const dialog = page.getByRole('dialog', { name: 'WhatsApp permissions' });
    await expect(dialog).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await expect(open).toBeFocused();
  });
});

test.describe('Copy and highlighting', () => {
  test('code blocks are highlighted and copy exactly their code; a reply copies as Markdown', async ({
    page,
    context,
    fake,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await ownerSession(page);
    await useModel(page);
    const chatId = await newChat(page, 'Code');
    fake.openai.enqueue({
      text: [
        'Here is **the function**:\n\n',
        '```ts\nfunction add(a: number, b: number): number {\n  return a + b; // sum\n}\n```\n',
      ],
    });
    await page.goto(`/chat/${chatId}`);
    await page.getByTestId('composer-input').fill('Write add in TypeScript');
    await page.getByTestId('composer-input').press('Enter');
    const reply = page.getByTestId('assistant-message').last();
    const code = reply.locator('pre code');
    await expect(code).toContainText('return a + b;');
    await expect(page.getByTestId('stop-button')).toBeHidden();
    await expect(code.locator('.hljs-keyword').first()).toHaveText('function');
    await expect(code.locator('.hljs-comment')).toHaveText('// sum');
    const keywordColour = await code
      .locator('.hljs-keyword')
      .first()
      .evaluate((el) => getComputedStyle(el).color);
    const plainColour = await code.evaluate((el) => getComputedStyle(el).color);
    expect(keywordColour).not.toBe(plainColour);
    await screenshots(page, 'code-highlighted');

    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    await reply.getByTestId('code-copy').click();
    await expect(reply.getByTestId('code-copy')).toHaveText('Copied');
    expect(await clipboard()).toBe(
      'function add(a: number, b: number): number {\n  return a + b; // sum\n}',
    );

    await reply.getByTestId('copy-button').click();
    await expect(reply.getByTestId('copy-button')).toContainText('Copied');
    expect(await clipboard()).toBe(
      'Here is **the function**:\n\n```ts\nfunction add(a: number, b: number): number {\n  return a + b; // sum\n}\n```',
    );

    await page
      .locator('mt-chat-message')
      .filter({ has: page.getByTestId('user-message') })
      .getByTestId('copy-button')
      .click();
    expect(await clipboard()).toBe('Write add in TypeScript');
  });

  test('the Data page shows documents as a table, one column per top-level key', async ({
    page,
  }) => {
    await ownerSession(page);
    await newChat(page, 'Table row');
    await page.goto('/data/chats');
    await expect(page.getByTestId('document-card').first()).toBeVisible();
    await page.getByTestId('documents-view-table').click();
    const table = page.getByTestId('documents-table');
    await expect(table).toBeVisible();
    const columns = await page
      .getByTestId('documents-table-column')
      .allTextContents();
    expect(columns.map((c) => c.trim())).toEqual(
      expect.arrayContaining(['_id', 'title', 'createdAt']),
    );
    expect(columns[0].trim()).toBe('_id');
    await expect(
      page.getByTestId('documents-table-row').filter({ hasText: 'Table row' }),
    ).toHaveCount(1);
    await screenshots(page, 'data-table');
    await page.reload();
    await expect(page.getByTestId('documents-table')).toBeVisible();
  });
});
