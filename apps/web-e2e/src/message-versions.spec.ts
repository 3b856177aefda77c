import type { Page } from '@playwright/test';
import { WORKSPACE_ROOT } from './support/app-server';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'message-versions' });

test.describe.configure({ mode: 'serial' });

/** Screenshots of this suite, light and dark (not committed). */
async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({
      path: `${WORKSPACE_ROOT}/dist/screenshots/message-versions/${name}-${scheme}.png`,
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function chatWithTwoExchanges(
  page: Page,
  fake: { openai: { enqueue(script: { text: string[] }): void } },
): Promise<void> {
  const settings = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-openai-key-7890',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(settings.status()).toBe(200);
  const res = await page.request.post('/api/chats', { data: {} });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await page.goto(`/chat/${id}`);
  const composer = page.getByTestId('composer-input');
  for (const [question, answer] of [
    ['First question', 'First answer'],
    ['Second question', 'Second answer'],
  ]) {
    fake.openai.enqueue({ text: [answer] });
    await composer.fill(question);
    await composer.press('Enter');
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      answer,
    );
    await expect(page.getByTestId('message-regenerate').last()).toBeVisible();
  }
}

test.describe('Message versions: edit any message, regenerate any reply, ← n/m →', () => {
  test('edits an older message, switches 2/2 → 1/2 → 2/2, and regenerates a reply (desktop)', async ({
    page,
    fake,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await ownerSession(page);
    await chatWithTwoExchanges(page, fake);
    const users = page.getByTestId('user-message');
    const replies = page.getByTestId('assistant-message');

    // Edit the first message: what followed it leaves, the new version is answered.
    await users.first().hover();
    await page.getByTestId('message-edit').first().click();
    const box = page.getByTestId('edit-message-input');
    await expect(box).toBeFocused();
    await expect(box).toHaveValue('First question');
    await box.fill('First question, edited');
    fake.openai.enqueue({ text: ['Edited answer'] });
    await box.press('Enter');
    await expect(replies).toHaveCount(1);
    await expect(replies.first()).toContainText('Edited answer');
    await expect(users).toHaveCount(1);
    await expect(users.first()).toContainText('First question, edited');
    const versions = page.getByTestId('message-versions');
    await expect(versions).toHaveCount(1);
    await expect(versions).toHaveAttribute('aria-label', 'Version 2 of 2');
    await expect(page.getByTestId('version-label')).toHaveText('2/2');
    // The model read only what came before the edited message.
    const sent = fake.openai.requests.at(-1)?.body.messages as Array<{
      role: string;
      content: unknown;
    }>;
    expect(
      sent
        .filter((m) => m.role !== 'system' && m.role !== 'developer')
        .map((m) => [m.role, m.content]),
    ).toEqual([['user', 'First question, edited']]);
    await screenshots(page, 'edited-desktop');

    // ← : version 1 and everything that followed it are back.
    await page.getByRole('button', { name: 'Previous version' }).click();
    await expect(page.getByTestId('version-label')).toHaveText('1/2');
    await expect(users).toHaveCount(2);
    await expect(users.first()).toContainText('First question');
    await expect(replies.last()).toContainText('Second answer');
    // The focus stays on the arrows (the one still usable), so the keyboard goes on from there.
    await expect(page.getByTestId('version-next')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('version-label')).toHaveText('2/2');
    await expect(users).toHaveCount(1);
    await expect(replies.first()).toContainText('Edited answer');

    // Regenerate the reply: 2/2 under it too, and its first version one click away.
    fake.openai.enqueue({ text: ['Regenerated answer'] });
    await page.getByTestId('message-regenerate').click();
    await expect(replies.first()).toContainText('Regenerated answer');
    await expect(page.getByTestId('version-label')).toHaveText(['2/2', '2/2']);
    await page.getByTestId('version-previous').last().click();
    await expect(replies.first()).toContainText('Edited answer');
    await expect(page.getByTestId('version-label')).toHaveText(['2/2', '1/2']);

    // What the server keeps, after a reload.
    await page.reload();
    await expect(replies.first()).toContainText('Edited answer');
    await expect(page.getByTestId('version-label')).toHaveText(['2/2', '1/2']);
  });

  test('on a phone the arrows and Edit show without hovering', async ({
    page,
    fake,
  }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await ownerSession(page);
    await chatWithTwoExchanges(page, fake);
    // Every message of the owner's offers Edit, every reply Regenerate.
    await expect(page.getByTestId('message-edit')).toHaveCount(2);
    await expect(page.getByTestId('message-regenerate')).toHaveCount(2);
    fake.openai.enqueue({ text: ['Another first answer'] });
    await page.getByTestId('message-regenerate').first().click();
    await expect(page.getByTestId('assistant-message')).toHaveCount(1);
    await expect(page.getByTestId('version-label')).toHaveText('2/2');
    const previous = page.getByRole('button', { name: 'Previous version' });
    await expect(previous).toBeVisible();
    const box = await previous.boundingBox();
    expect(box?.width).toBeGreaterThanOrEqual(32);
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
    await screenshots(page, 'versions-phone');
    await previous.click();
    await expect(page.getByTestId('assistant-message')).toHaveCount(2);
    await expect(page.getByTestId('version-label')).toHaveText('1/2');
  });
});
