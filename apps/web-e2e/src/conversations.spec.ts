import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'conversations' });

test.describe.configure({ mode: 'serial' });

test.describe('Conversations', () => {
  test('settings: the owner sets a key and a model; the key comes back masked', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/settings');
    await page.getByTestId('openai-key-input').fill('sk-e2e-openai-key-7890');
    await page.getByTestId('primary-model-input').fill('gpt-4.1-mini');
    await page.getByTestId('save-settings').click();
    await expect(page.getByTestId('openai-key-hint')).toContainText('••••7890');
    const settings = await (await page.request.get('/api/settings')).json();
    expect(settings).toMatchObject({
      openaiApiKey: '••••7890',
      primaryModel: 'gpt-4.1-mini',
    });
    await page.reload();
    // With a key saved, the primary model is a list of the provider's models, as in the first-run step.
    const list = page.getByTestId('primary-model-select');
    await expect(list).toHaveValue('gpt-4.1-mini');
    await expect(list.locator('option')).toContainText([
      'gpt-4.1',
      'gpt-4.1-mini',
      'o4-mini',
      'Other',
    ]);
    await expect(page.getByTestId('primary-model-input')).toHaveCount(0);
    // "Other…" takes any id (an endpoint's model, one the provider does not list).
    await list.selectOption({
      label: "Other (an endpoint's model, an id not listed)…",
    });
    await page.getByTestId('primary-model-input').fill('gpt-4.1-nano');
    await page.getByTestId('save-settings').click();
    await expect
      .poll(
        async () =>
          (await (await page.request.get('/api/settings')).json()).primaryModel,
      )
      .toBe('gpt-4.1-nano');
    await list.selectOption('gpt-4.1-mini');
    await expect(page.getByTestId('primary-model-input')).toHaveCount(0);
    await page.getByTestId('save-settings').click();
    await expect
      .poll(
        async () =>
          (await (await page.request.get('/api/settings')).json()).primaryModel,
      )
      .toBe('gpt-4.1-mini');
  });

  test('chat: the reply streams in as Markdown with a tool chip, and the memory lands in the prompt', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'save_memory',
            arguments: { memory: '- Loves green tea' },
          },
        ],
      },
      {
        text: [
          'Noted',
          ': you love **green tea**',
          '.\n\n```ts\nconst tea = "green";\n```',
        ],
        // Long enough for the Stop button to be seen on a busy machine.
        chunkDelayMs: 1000,
      },
    );
    await page.goto('/chat');
    await page.getByTestId('new-chat').click();
    // A draft: the chat is stored with its first message.
    await expect(page).toHaveURL(/\/chat\/new$/);
    await page
      .getByTestId('composer-input')
      .fill('Remember that I love green tea');
    await page.getByTestId('composer-input').press('Enter');

    await expect(page.getByTestId('user-message')).toContainText(
      'Remember that I love green tea',
    );
    const reply = page.getByTestId('assistant-message').last();
    // Streaming: the first piece is on screen before the last one arrived.
    await expect(reply).toContainText('Noted');
    await expect(page.getByTestId('stop-button')).toBeVisible();
    await expect(reply.locator('strong')).toHaveText('green tea');
    await expect(reply.locator('pre code')).toContainText(
      'const tea = "green";',
    );
    await expect(page.getByTestId('stop-button')).toBeHidden();

    const chip = page.getByTestId('tool-chip');
    await expect(chip).toHaveAttribute('data-tool', 'save_memory');
    await expect(chip).toHaveAttribute('data-status', 'ok');
    await page.getByTestId('tool-chip-toggle').click();
    await expect(page.getByTestId('tool-chip-arguments')).toContainText(
      'Loves green tea',
    );
    await page.getByTestId('tool-chip-result-toggle').click();
    await expect(page.getByTestId('tool-chip-result')).toContainText(
      'Memory updated successfully',
    );

    // The chat was named by its first message and survives a reload.
    await expect(page.getByTestId('chat-item-title').first()).toHaveText(
      'Remember that I love green tea',
    );
    await page.reload();
    await expect(
      page.getByTestId('assistant-message').last().locator('strong'),
    ).toHaveText('green tea');
    await expect(page.getByTestId('tool-chip')).toHaveAttribute(
      'data-status',
      'ok',
    );

    // The Instruction page shows the memory the AI saved; an edit shows up in the prompt preview.
    await page.getByTestId('nav-instruction').click();
    await expect(page.getByTestId('memory-input')).toHaveValue(
      '- Loves green tea',
    );
    await expect(page.getByTestId('prompt-preview')).toContainText(
      '## Your Memory\n- Loves green tea',
    );
    await page
      .getByTestId('memory-input')
      .fill('- Loves green tea\n- Lives in Lyon');
    await expect(page.getByTestId('memory-counter')).toContainText('33');
    await page.getByTestId('save-instruction').click();
    await expect(page.getByTestId('prompt-preview')).toContainText(
      '- Lives in Lyon',
    );
  });

  test('chat: Stop ends the reply and keeps what arrived; HTML in a reply stays text', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    fake.openai.enqueue({
      text: [
        '<img src=x onerror="window.__pwned=1">Starting ',
        ...Array.from({ length: 40 }, (_, i) => `word${i} `),
      ],
      chunkDelayMs: 200,
    });
    await page.goto('/chat');
    await page.getByTestId('new-chat').click();
    await page.getByTestId('composer-input').fill('Write a long story');
    await page.getByTestId('send-button').click();
    const reply = page.getByTestId('assistant-message').last();
    await expect(reply).toContainText('word1');
    await page.getByTestId('stop-button').click();
    await expect(page.getByTestId('assistant-stopped')).toBeVisible();
    await expect(reply).toContainText(
      '<img src=x onerror="window.__pwned=1">Starting',
    );
    expect(
      await page.evaluate(
        () => (window as unknown as { __pwned?: number }).__pwned,
      ),
    ).toBeUndefined();
    await expect(reply.locator('img')).toHaveCount(0);
    const text = await reply.textContent();
    expect(text).not.toContain('word39');
  });

  test('data: a collection the AI created shows up with its documents', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            name: 'db_query',
            arguments: {
              operation: 'insertOne',
              collection: 'ai_books',
              data: { title: 'Dune', author: 'Frank Herbert' },
            },
          },
        ],
      },
      { text: ['Added Dune to your reading list.'] },
    );
    await page.goto('/chat');
    await page.getByTestId('new-chat').click();
    await page
      .getByTestId('composer-input')
      .fill('Track my reading list: Dune');
    await page.getByTestId('composer-input').press('Enter');
    await expect(page.getByTestId('assistant-message').last()).toContainText(
      'Added Dune',
    );

    await page.getByTestId('nav-data').click();
    const books = page
      .getByTestId('collection-item')
      .filter({ hasText: 'ai_books' });
    await expect(books.getByTestId('collection-count')).toHaveText('1');
    await expect(
      page
        .getByTestId('collection-item')
        .filter({ hasText: 'settings' })
        .getByTestId('read-only-badge'),
    ).toBeVisible();
    await books.click();
    await expect(page.getByTestId('document-card')).toContainText(
      'Frank Herbert',
    );
  });
});
