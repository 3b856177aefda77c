import type { Page } from '@playwright/test';
import { OWNER_PASSWORD } from './support/fixtures';
import { expect, ownerSession, test } from './support/fake-llm';

// A MetatronOS of its own that starts with no owner: the first run connects a model, then the
// chat list is searched, pinned and archived. The browser lives in Tokyo.
test.use({ appName: 'chat-list', timezoneId: 'Asia/Tokyo' });
test.describe.configure({ mode: 'serial' });

const GOOD_KEY = 'sk-e2e-first-run-key-0001';

async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `dist/screenshots/${name}-${scheme}.png` });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test.describe('First run and the chat list', () => {
  test('fresh instance: password, then connect a model (wrong key refused), then the first chat works', async ({
    page,
    fake,
  }) => {
    fake.openaiModels.key = GOOD_KEY;
    await page.goto('/');
    await expect(page).toHaveURL(/\/setup$/);
    await page.getByTestId('setup-password').fill(OWNER_PASSWORD);
    await page.getByTestId('setup-confirm').fill(OWNER_PASSWORD);
    await page.getByTestId('setup-submit').click();

    // The connect step, with the browser's zone.
    await expect(page.getByTestId('connect-form')).toBeVisible();
    await expect(page.getByTestId('connect-timezone')).toHaveValue(
      'Asia/Tokyo',
    );
    await expect(page.getByTestId('connect-save')).toBeDisabled();
    await page.getByTestId('connect-provider').selectOption('openai');
    await page.getByTestId('connect-key').fill('sk-e2e-wrong-key-99999999');
    await page.getByTestId('connect-test').click();
    await expect(page.getByTestId('connect-error')).toHaveText(
      /OpenAI refused the API key \(401\)/,
    );
    await expect(page.getByTestId('connect-error')).not.toContainText('99999');

    await page.getByTestId('connect-key').fill(GOOD_KEY);
    await page.getByTestId('connect-test').click();
    await expect(page.getByTestId('connect-model')).toBeVisible();
    await page.getByTestId('connect-model').selectOption('gpt-4.1-mini');
    await screenshots(page, 'first-run-connect-model');
    await page.getByTestId('connect-save').click();

    // Straight into a new chat with its message box.
    await expect(page).toHaveURL(/\/chat\/new$/);
    await expect(page.getByTestId('composer-input')).toBeVisible();
    const settings = await (await page.request.get('/api/settings')).json();
    expect(settings).toMatchObject({
      primaryModel: 'gpt-4.1-mini',
      timezone: 'Asia/Tokyo',
      openaiApiKey: '••••0001',
    });

    // New chat is a draft: nothing is stored until the first message.
    await page.getByTestId('new-chat').click();
    await expect(page).toHaveURL(/\/chat\/new$/);
    expect(await (await page.request.get('/api/chats')).json()).toEqual([]);
    fake.openai.enqueue({ text: ['Hello ', 'from the model.'] });
    await page.getByTestId('composer-input').fill('Plan a trip to Lisbon');
    await page.getByTestId('composer-input').press('Enter');
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      'Hello from the model.',
    );
    await expect(page).toHaveURL(/\/chat\/[0-9a-f]{24}$/);
    await expect(page.getByTestId('chat-item-title')).toHaveText([
      'Plan a trip to Lisbon',
    ]);
    expect(fake.openai.requests[0].apiKey).toBe(GOOD_KEY);
    // One clock: the message's time is Tokyo's.
    await expect(page.getByTestId('message-time').last()).toHaveAttribute(
      'title',
      /\(Asia\/Tokyo\)$/,
    );
  });

  test('search finds titles and message text; pin puts a chat first; archive moves it to the Archived view', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    fake.openai.fallback = { text: ['Noted.'] };
    for (const content of [
      'Groceries: oat milk and dentist floss',
      'Book club notes',
    ]) {
      const res = await page.request.post('/api/chats/messages', {
        data: { content },
      });
      expect(res.status()).toBe(200);
      await res.body();
    }
    await page.goto('/chat');
    const titles = page.getByTestId('chat-item-title');
    await expect(titles).toHaveText([
      'Book club notes',
      'Groceries: oat milk and dentist floss',
      'Plan a trip to Lisbon',
    ]);

    // Message text (the model's reply to the first chat) and titles, any letter case.
    await page.getByTestId('chat-search').fill('HELLO FROM');
    await expect(titles).toHaveText(['Plan a trip to Lisbon']);
    await page.getByTestId('chat-search').fill('dentist');
    await expect(titles).toHaveText(['Groceries: oat milk and dentist floss']);
    await page.getByTestId('chat-search').fill('nothing like it');
    await expect(page.getByTestId('no-chats')).toHaveText(
      'No chat mentions “nothing like it”.',
    );
    await page.getByTestId('chat-search').press('Escape');
    await expect(titles).toHaveCount(3);

    // Pin the oldest: it comes first.
    const row = (title: string) =>
      page.getByTestId('chat-item').filter({ hasText: title });
    await row('Plan a trip').hover();
    await row('Plan a trip').getByTestId('pin-chat').click();
    await expect(titles.first()).toHaveText('Plan a trip to Lisbon');
    await expect(row('Plan a trip').getByTestId('chat-pinned')).toBeVisible();

    // Archive one: it leaves the list and shows in the Archived view.
    await row('Book club').hover();
    await row('Book club').getByTestId('archive-chat').click();
    await expect(titles).toHaveText([
      'Plan a trip to Lisbon',
      'Groceries: oat milk and dentist floss',
    ]);
    await screenshots(page, 'chat-list');
    await page.getByTestId('archived-toggle').click();
    await expect(page.getByTestId('archived-note')).toBeVisible();
    await expect(titles).toHaveText(['Book club notes']);
    await row('Book club').hover();
    await row('Book club').getByTestId('archive-chat').click();
    await expect(page.getByTestId('no-chats')).toHaveText('No archived chats.');
    await page.getByTestId('archived-toggle').click();
    await expect(titles).toHaveCount(3);
  });

  test("a chat's model: picked from the providers' list, used for its replies", async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await page.goto('/chat');
    await page
      .getByTestId('chat-link')
      .filter({ hasText: 'Plan a trip' })
      .click();
    const picker = page.getByTestId('chat-model');
    await expect(picker).toHaveValue('');
    await picker.focus();
    await expect(picker.locator('option[value="gpt-4.1"]')).toHaveCount(1);
    await picker.selectOption('gpt-4.1');
    await expect
      .poll(async () => {
        const chats = await (await page.request.get('/api/chats')).json();
        return chats.find((c: { title: string }) => c.title.startsWith('Plan'))
          ?.model;
      })
      .toBe('gpt-4.1');
    fake.openai.enqueue({ text: ['Answered by 4.1'] });
    await page.getByTestId('composer-input').fill('Which model are you?');
    await page.getByTestId('composer-input').press('Enter');
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      'Answered by 4.1',
    );
    expect(fake.openai.requests.at(-1)?.model).toBe('gpt-4.1');
  });
});
