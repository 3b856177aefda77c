import type { FakeRecordedRequest } from '../../../tools/fake-llm/fake-llm-server';
import { expect, ownerSession, test } from './support/fake-llm';

// Issue 27: the nightly consolidation's model part in a real browser. The owner said a fact early in a
// long chat; "Run now" asks the (fake) model, which proposes it; the Memory page shows the change with
// its source, the source link opens the chat scrolled to that old message (older than the first page),
// and Approve makes the proposal a note.
test.use({ appName: 'memory-consolidation' });

const CONSOLIDATION = 'You tidy the memory notes';

function isConsolidation(request: FakeRecordedRequest): boolean {
  return JSON.stringify(request.body).includes(CONSOLIDATION);
}

test('Run now shows a proposal with its source; the link scrolls to an old message; Approve makes it a note', async ({
  page,
  fake,
}) => {
  test.setTimeout(120_000);
  await ownerSession(page);
  expect(
    (
      await page.request.patch('/api/settings', {
        data: {
          openaiApiKey: 'sk-e2e-memory-key-123456',
          primaryModel: 'gpt-4.1-mini',
          budget: {
            dailyUsd: null,
            monthlyUsd: null,
            unattendedDailyUsd: null,
          },
        },
      })
    ).status(),
  ).toBe(200);
  fake.openai.fallback = (request) => {
    if (!isConsolidation(request)) return { text: ['Noted.'] };
    const data = JSON.parse(
      (
        request.body as { messages: Array<{ role: string; content: string }> }
      ).messages.find((m) => m.role === 'user')?.content ?? '{}',
    ) as { ownerMessages: Array<{ id: string; text: string }> };
    const clara = data.ownerMessages.find((m) => m.text.includes('Clara'));
    return {
      text: [
        JSON.stringify({
          duplicates: [],
          contradictions: [],
          proposals: clara
            ? [
                {
                  text: "Clara's birthday is on 12 May",
                  messages: [clara.id],
                  reason: 'the owner asked not to forget it',
                },
              ]
            : [],
        }),
      ],
    };
  };
  const first = await page.request.post('/api/chats/messages', {
    data: {
      content: "Clara's birthday is on the 12th of May, don't let me forget.",
    },
  });
  expect(first.status()).toBe(200);
  await first.body();
  const chatId = (
    (await (await page.request.get('/api/chats')).json()) as Array<{
      id: string;
    }>
  )[0].id;
  // Enough turns after it that the fact is older than the first page the chat loads.
  for (let i = 0; i < 30; i++) {
    const res = await page.request.post(`/api/chats/${chatId}/messages`, {
      data: { content: `Filler question ${i}` },
    });
    expect(res.status()).toBe(200);
    await res.body();
  }

  await page.goto('/memory');
  await page.getByTestId('memory-consolidate').click();
  const change = page.getByTestId('memory-run-change');
  await expect(change).toContainText('Proposed (model)', { timeout: 20_000 });
  await expect(change).toContainText("After: “Clara's birthday is on 12 May”");
  await expect(page.getByTestId('memory-run-model')).toContainText(
    'The model was asked',
  );
  await expect(page.getByTestId('memory-proposals')).toContainText(
    "Clara's birthday is on 12 May",
  );
  expect(fake.openai.requests.filter(isConsolidation)).toHaveLength(1);

  // The source: the chat opens at that message, 61 messages back, scrolled to and highlighted.
  await change.getByTestId('memory-run-source').first().click();
  await expect(page).toHaveURL(
    new RegExp(`/chat/${chatId}#message-[0-9a-f]{24}$`),
  );
  const messageId = new URL(page.url()).hash.replace('#message-', '');
  const target = page.locator(`[data-message-id="${messageId}"]`);
  await expect(target).toContainText('Clara', { timeout: 15_000 });
  await expect(target).toBeInViewport();
  await expect(target).toHaveAttribute('data-highlighted', 'true');

  // Approve: the proposal becomes a note, found by search.
  await page.goto('/memory');
  await page
    .getByTestId('memory-proposals')
    .getByTestId('memory-approve')
    .click();
  await expect(page.getByTestId('memory-proposals')).toHaveCount(0);
  await expect(page.getByTestId('memory-notes')).toContainText(
    "Clara's birthday is on 12 May",
  );
  await page.getByTestId('memory-search-input').fill('birthday');
  await page.getByTestId('memory-search').click();
  await expect(page.getByTestId('memory-results')).toContainText(
    "Clara's birthday is on 12 May",
  );
});
