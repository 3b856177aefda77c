import type { Page } from '@playwright/test';
import { WORKSPACE_ROOT } from './support/app-server';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'console-replies' });

test.describe.configure({ mode: 'serial' });

/** Screenshots of this suite, light and dark (not committed). */
async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({
      path: `${WORKSPACE_ROOT}/dist/screenshots/console-replies/${name}-${scheme}.png`,
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function useModel(page: Page): Promise<void> {
  const res = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-openai-key-7890',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(res.status()).toBe(200);
}

/** Opens a stored, empty chat (the New chat button opens a draft that is stored with its first message). */
async function newChat(page: Page): Promise<void> {
  const res = await page.request.post('/api/chats', { data: {} });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await page.goto(`/chat/${id}`);
  await expect(page).toHaveURL(/\/chat\/[0-9a-f]{24}$/);
}

test.describe('Console: nothing lost, replies you can redo', () => {
  test('an unsaved edit is guarded when leaving the page in the app, and Ctrl+S saves it', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/instruction');
    const memory = page.getByTestId('memory-input');
    await expect(memory).toBeEnabled();
    await memory.fill('- Drinks green tea');

    // Leaving asks; "Cancel" keeps the page and the edit.
    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByTestId('nav-chat').click();
    await expect
      .poll(() => questions)
      .toEqual(['You have unsaved changes. Leave without saving them?']);
    await expect(page).toHaveURL(/\/instruction$/);
    await expect(memory).toHaveValue('- Drinks green tea');

    // Ctrl+S saves (not the browser's "save page"), and then leaving asks nothing.
    await memory.press('Control+s');
    await expect
      .poll(
        async () =>
          (await (await page.request.get('/api/system-instruction')).json())
            .memory,
      )
      .toBe('- Drinks green tea');
    page.on('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByTestId('nav-chat').click();
    await expect(page).toHaveURL(/\/chat/);
    expect(questions).toHaveLength(1);

    // Settings: leaving with an edit and saying OK drops it.
    page.removeAllListeners('dialog');
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('primary-model-input').fill('gpt-4.1');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('nav-chat').click();
    await expect(page).toHaveURL(/\/chat/);
    const settings = await (await page.request.get('/api/settings')).json();
    expect(settings.primaryModel).not.toBe('gpt-4.1');
  });

  test('a failed reply survives a reload and can be retried; the last reply regenerated; the last message edited and resent', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await useModel(page);
    await newChat(page);

    fake.openai.enqueue({ status: 500, message: 'upstream down' });
    await page.getByTestId('composer-input').fill('What is 2+3?');
    await page.getByTestId('composer-input').press('Enter');
    const reply = page.getByTestId('assistant-message').last();
    await expect(reply.getByTestId('assistant-error')).toContainText(
      /server error/i,
    );
    await page.reload();
    await expect(reply.getByTestId('assistant-error')).toContainText(
      /server error/i,
    );
    await expect(page.getByTestId('message-retry')).toBeVisible();
    await expect(page.getByTestId('message-edit')).toBeVisible();
    await screenshots(page, 'retry');

    // Retry: the first token comes late, the thinking indicator counts the seconds meanwhile.
    fake.openai.enqueue({ text: ['', 'Five.'], chunkDelayMs: 4_000 });
    await page.getByTestId('message-retry').click();
    await expect(page.getByTestId('thinking-elapsed')).toHaveText('1 s', {
      timeout: 3_000,
    });
    await screenshots(page, 'thinking');
    await expect(reply).toContainText('Five.');
    await expect(page.getByTestId('assistant-error')).toHaveCount(0);
    await expect(page.getByTestId('message-regenerate')).toBeVisible();

    // Regenerate: the new reply replaces the old one.
    fake.openai.enqueue({ text: ['It is ', 'five.'] });
    await page.getByTestId('message-regenerate').click();
    await expect(reply).toContainText('It is five.');
    await expect(page.getByTestId('assistant-message')).toHaveCount(1);

    // Edit and resend.
    await page.getByTestId('message-edit').click();
    const box = page.getByTestId('edit-message-input');
    await expect(box).toBeFocused();
    await expect(box).toHaveValue('What is 2+3?');
    await box.fill('What is 5+5?');
    await screenshots(page, 'edit');
    fake.openai.enqueue({ text: ['Ten.'] });
    await box.press('Enter');
    await expect(page.getByTestId('user-message')).toContainText(
      'What is 5+5?',
    );
    await expect(reply).toContainText('Ten.');
    expect(fake.openai.requests.at(-1)?.body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'What is 5+5?',
    });

    // What the server kept, after a reload: one exchange, the edited question and the last answer.
    await page.reload();
    await expect(page.getByTestId('user-message')).toHaveCount(1);
    await expect(page.getByTestId('user-message')).toContainText(
      'What is 5+5?',
    );
    await expect(page.getByTestId('assistant-message')).toHaveCount(1);
    await expect(reply).toContainText('Ten.');
  });

  test('tool chips say what a call did, with its arguments in words', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await useModel(page);
    await newChat(page);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'save_memory',
            arguments: { memory: '- Lives in Lyon' },
          },
        ],
      },
      { text: ['Noted.'] },
    );
    await page.getByTestId('composer-input').fill('I live in Lyon');
    await page.getByTestId('composer-input').press('Enter');
    const chip = page.getByTestId('tool-chip');
    await expect(chip).toHaveAttribute('data-status', 'ok');
    await expect(chip.getByTestId('tool-chip-label')).toHaveText(
      'Saved to memory',
    );
    // The reply has ended (the thread reloads it once it is stored) before the chip is opened.
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      'Noted.',
    );
    await expect(page.getByTestId('stop-button')).toHaveCount(0);
    await chip.getByTestId('tool-chip-toggle').click();
    await expect(chip.getByTestId('tool-chip-arguments')).toContainText(
      'memory:- Lives in Lyon',
    );
    await expect(chip.getByTestId('tool-chip-result')).toHaveCount(0);
    await chip.getByTestId('tool-chip-result-toggle').click();
    await expect(chip.getByTestId('tool-chip-result')).toBeVisible();
    await screenshots(page, 'tool-chip');
  });
});
