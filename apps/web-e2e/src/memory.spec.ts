import { expect, ownerSession, test } from './support/fake-llm';

// Issue 27: the Memory page in a real browser against the real API and index. A scripted turn
// remembers a fact; the page searches it, links to the message it came from, edits it, shows the
// change, and forgets it: searching afterwards finds nothing.
test.use({ appName: 'memory' });
test.describe.configure({ mode: 'serial' });

test('search, a note’s source link, edit, the day’s changes, and forget proven by searching again', async ({
  page,
  fake,
}) => {
  await ownerSession(page);
  expect(
    (
      await page.request.patch('/api/settings', {
        data: {
          openaiApiKey: 'sk-e2e-memory-key-123456',
          primaryModel: 'gpt-4.1-mini',
        },
      })
    ).status(),
  ).toBe(200);
  const created = await page.request.post('/api/chats', { data: {} });
  const chatId = ((await created.json()) as { id: string }).id;

  fake.openai.enqueue(
    {
      toolCalls: [
        {
          id: 'r1',
          name: 'remember',
          arguments: { text: 'Anna is allergic to peanuts' },
        },
      ],
    },
    { text: ['Noted: Anna is allergic to peanuts.'] },
  );
  await page.goto(`/chat/${chatId}`);
  await page
    .getByTestId('composer-input')
    .fill('Please remember: Anna has a peanut allergy, she carries an EpiPen');
  await page.getByTestId('composer-input').press('Enter');
  await expect(page.getByTestId('assistant-message').last()).toContainText(
    'Noted',
    { timeout: 15_000 },
  );
  const [ownerMessageId] = await page
    .locator('[data-message-id]')
    .evaluateAll((nodes) =>
      nodes.map((n) => n.getAttribute('data-message-id') ?? ''),
    );

  await page.goto('/memory');
  const note = page.getByTestId('memory-note');
  await expect(note.getByTestId('memory-note-text')).toHaveText(
    'Anna is allergic to peanuts',
  );
  await expect(note.getByTestId('memory-note-source')).toContainText('Said by');

  // Search: another word form finds the note and the owner's message.
  await page.getByTestId('memory-search-input').fill('allergy');
  await page.getByTestId('memory-search').click();
  const results = page.getByTestId('memory-result');
  await expect(results.first()).toBeVisible();
  await expect(page.getByTestId('memory-results')).toContainText(
    'Anna is allergic to peanuts',
  );
  await expect(page.getByTestId('memory-results')).toContainText(
    'peanut allergy, she carries an EpiPen',
  );

  // The note's source: one click to its chat, at the owner's message.
  await note.getByTestId('memory-note-link').click();
  await expect(page).toHaveURL(
    new RegExp(`/chat/${chatId}#message-${ownerMessageId}$`),
  );
  await expect(
    page.locator(`[data-message-id="${ownerMessageId}"]`),
  ).toContainText('peanut allergy');

  // Edit: the new text is kept, the prior one is the day's change.
  await page.goto('/memory');
  await note.getByTestId('memory-edit').click();
  await note
    .getByTestId('memory-edit-input')
    .fill('Anna has a severe peanut allergy (zanzibar EpiPen in her bag)');
  await note.getByTestId('memory-save').click();
  await expect(note.getByTestId('memory-note-text')).toHaveText(
    'Anna has a severe peanut allergy (zanzibar EpiPen in her bag)',
  );
  await expect(
    page
      .getByTestId('memory-change')
      .filter({ hasText: 'edited by the owner' }),
  ).toContainText('Anna is allergic to peanuts');
  await page.getByTestId('memory-search-input').fill('zanzibar');
  await page.getByTestId('memory-search').click();
  await expect(results).toHaveCount(1);

  // Forget: gone from the notes and from search, in the page and through the API.
  await note.getByTestId('memory-forget').click();
  await expect(page.getByTestId('memory-empty')).toBeVisible();
  await page.getByTestId('memory-search-input').fill('zanzibar');
  await page.getByTestId('memory-search').click();
  await expect(page.getByTestId('memory-no-results')).toBeVisible();
  const api = (await (
    await page.request.get('/api/memories?q=zanzibar')
  ).json()) as { results?: unknown[] };
  expect(api.results ?? []).toEqual([]);
});
