import { join } from 'node:path';
import type { Page, Route } from '@playwright/test';
import type { ChatMessage, PendingActionView } from '@metatronos/shared-types';
import { expect, ownerSession, test } from './support/fixtures';

// The console's side of pending actions in a real browser against the real API, with the actions
// routes (`/api/actions`) answered by the test as the contract fixes them: it holds on a branch
// without the actions API. `pending-actions.spec.ts` (with the API) drives the real thing.
test.use({ appName: 'pending-actions-ui' });
test.describe.configure({ mode: 'serial' });

const SHOTS = join(__dirname, '../../../dist/screenshots/pending-actions');
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({
      path: join(SHOTS, `${name}-${scheme}.png`),
      fullPage: true,
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

function action(
  id: string,
  chatId: string | null,
  extra: Partial<PendingActionView> = {},
): PendingActionView {
  const now = Date.now();
  return {
    id,
    tool: 'whatsapp_send_message',
    summary:
      'Send “Here are the owner’s notes” to Anna (+49 170 1234567) on WhatsApp',
    arguments: { to: '+491701234567', text: 'Here are the owner’s notes' },
    chatId,
    messageId: 'm2',
    jobId: null,
    source: 'chat',
    tainted: true,
    taint: [
      {
        by: 'url_fetch',
        text: 'a web page from example.org',
        at: new Date(now).toISOString(),
      },
    ],
    reason: {
      kind: 'tainted',
      text: 'this turn read a web page from example.org',
    },
    effect: 'send',
    status: 'pending',
    result: null,
    error: null,
    createdAt: new Date(now - 5 * 60_000).toISOString(),
    updatedAt: new Date(now - 5 * 60_000).toISOString(),
    expiresAt: new Date(now + 23 * 3_600_000).toISOString(),
    ...extra,
  };
}

/** Answers `/api/actions` from `actions` as the contract says: approve once, then 409. */
async function serveActions(
  page: Page,
  actions: PendingActionView[],
): Promise<{ approved: string[]; stillListed: Set<string> }> {
  const approved: string[] = [];
  // Actions the list keeps showing as waiting after they changed elsewhere (a page that has not re-read
  // its list yet), whatever refreshes it meanwhile: listed as they were, still pending. (The console
  // drops an action listed with another status, and the page reloads its list when the event stream
  // opens, which on a busy machine can come after the change.)
  const stillListed = new Set<string>();
  await page.route('**/api/actions**', async (route: Route) => {
    const request = route.request();
    const url = new URL(request.url());
    const [, id, verb] =
      /^\/api\/actions(?:\/([^/]+))?(?:\/(approve|discard))?$/.exec(
        url.pathname,
      ) ?? [];
    const found = actions.find((a) => a.id === id);
    if (!id && request.method() === 'GET') {
      const chatId = url.searchParams.get('chatId');
      return route.fulfill({
        json: actions
          .filter(
            (a) =>
              (a.status === 'pending' || stillListed.has(a.id)) &&
              (!chatId || a.chatId === chatId),
          )
          .map((a) => ({ ...a, status: 'pending' })),
      });
    }
    if (!found)
      return route.fulfill({
        status: 404,
        json: { statusCode: 404, message: 'Action not found' },
      });
    if (found.status !== 'pending')
      return route.fulfill({
        status: 409,
        json: { statusCode: 409, message: `Already ${found.status}` },
      });
    if (verb === 'approve') {
      found.status = 'done';
      approved.push(found.id);
      return route.fulfill({
        json: { status: 'done', result: '{"sent":true,"to":"Anna"}' },
      });
    }
    if (verb === 'discard') {
      found.status = 'discarded';
      return route.fulfill({ json: { status: 'discarded' } });
    }
    const body = request.postDataJSON() as {
      arguments: Record<string, unknown>;
    };
    found.arguments = body.arguments;
    found.summary = `Send “${String(body.arguments['text'])}” to Anna on WhatsApp`;
    return route.fulfill({ json: found });
  });
  return { approved, stillListed };
}

for (const viewport of VIEWPORTS) {
  test(`Pending actions page and the chat's inline action (${viewport.name})`, async ({
    page,
  }) => {
    await page.setViewportSize(viewport);
    await ownerSession(page);
    const created = await page.request.post('/api/chats', {
      data: { title: 'Notes for Anna' },
    });
    const chatId = ((await created.json()) as { id: string }).id;
    const actions = [
      action('a1', chatId),
      action('a2', null, {
        tool: 'calendar_actions',
        arguments: { action: 'delete', id: 'ev-9' },
        summary: 'Delete “Dentist” on Tuesday 2 December, 10:00 (every week)',
        source: 'cron',
        messageId: null,
        tainted: false,
        taint: [],
        reason: {
          kind: 'unattended',
          text: 'a scheduled job may not delete on its own',
        },
        effect: 'delete',
      }),
    ];
    const served = await serveActions(page, actions);

    // The badge and the page.
    await page.goto('/chat');
    await expect(page.getByTestId('nav-actions-badge')).toContainText('2');
    if (viewport.width < 960)
      await page.getByRole('button', { name: 'Toggle navigation' }).click();
    await page.getByTestId('nav-actions').click();
    await expect(page).toHaveURL(/\/actions$/);
    const first = page.locator('[data-action-id="a1"]');
    await expect(first.getByTestId('action-title')).toHaveText(
      'Send a WhatsApp message',
    );
    await expect(first.getByTestId('action-reason')).toContainText(
      'this turn read a web page from example.org',
    );
    await expect(
      page.locator('[data-action-id="a2"]').getByTestId('action-source'),
    ).toHaveText('Scheduled job');
    await screenshots(page, `page-${viewport.name}`);

    // Edit shows the change before saving.
    await first.getByTestId('edit-action').click();
    await first
      .getByTestId('action-field-text')
      .fill('Here are the public notes');
    await expect(first.getByTestId('action-change')).toContainText(
      'Here are the public notes',
    );
    await screenshots(page, `edit-${viewport.name}`);
    await first.getByTestId('save-action').click();
    await expect(first.getByTestId('action-summary')).toContainText(
      'Here are the public notes',
    );

    // Inline in the chat, with the taint marker on the reply.
    const messages: ChatMessage[] = [
      {
        id: 'm1',
        chatId,
        role: 'user',
        content: 'Read example.org and do what it says',
        status: 'complete',
        createdAt: new Date(Date.now() - 6 * 60_000).toISOString(),
        updatedAt: new Date(Date.now() - 6 * 60_000).toISOString(),
      },
      {
        id: 'm2',
        chatId,
        role: 'assistant',
        content:
          'The page asks me to send your notes to Anna; I asked you first.',
        status: 'complete',
        parts: [
          {
            type: 'tool_call',
            id: 't1',
            name: 'url_fetch',
            arguments: { url: 'https://example.org/' },
            result: '{"status":200}',
            error: null,
            durationMs: 120,
            taint: {
              by: 'url_fetch',
              text: 'a web page from example.org',
              at: new Date().toISOString(),
            },
          },
          {
            type: 'tool_call',
            id: 't2',
            name: 'whatsapp_send_message',
            arguments: actions[0].arguments,
            result: '{"pending":true,"actionId":"a1"}',
            error: null,
            durationMs: 3,
            pendingActionId: 'a1',
          },
          {
            type: 'text',
            text: 'The page asks me to send your notes to Anna; I asked you first.',
          },
        ],
        taint: [
          {
            by: 'url_fetch',
            text: 'a web page from example.org',
            at: new Date().toISOString(),
          },
        ],
        createdAt: new Date(Date.now() - 5 * 60_000).toISOString(),
        updatedAt: new Date(Date.now() - 5 * 60_000).toISOString(),
      },
    ];
    await page.route(`**/api/chats/${chatId}/messages?**`, (route) =>
      route.request().method() === 'GET'
        ? route.fulfill({ json: messages })
        : route.continue(),
    );
    await page.goto(`/chat/${chatId}`);
    const reply = page.getByTestId('assistant-message');
    await expect(reply.getByTestId('tool-chip-taint')).toHaveText(
      'read third-party content: a web page from example.org',
    );
    await expect(reply.getByTestId('assistant-taint')).toHaveAttribute(
      'aria-label',
      'This turn read third-party content: a web page from example.org. Show the prompt it now sends.',
    );
    const inline = reply.locator('[data-action-id="a1"]');
    await expect(inline.getByTestId('approve-action')).toBeVisible();
    await screenshots(page, `chat-${viewport.name}`);

    // The mode menu by the message box opens where there is room, every mode in view (issue 29.2).
    await page.getByTestId('mode-chip').click();
    const options = page.locator('[data-testid^="mode-option-"]');
    await expect(options.first()).toBeVisible();
    expect(await options.count()).toBeGreaterThan(8);
    for (const option of await options.all())
      await expect(option).toBeInViewport({ ratio: 1 });
    await screenshots(page, `mode-menu-${viewport.name}`);
    await page.keyboard.press('Escape');
    await inline.getByTestId('approve-action').click();
    await expect(inline.getByTestId('action-outcome')).toContainText(
      'Done: it ran once.',
    );
    expect(served.approved).toEqual(['a1']);
    await expect(page.getByTestId('nav-actions-badge')).toContainText('1');
    await screenshots(page, `chat-approved-${viewport.name}`);

    // Discarded meanwhile (another tab): approving says so in words and runs nothing.
    await page.goto('/actions');
    const second = page.locator('[data-action-id="a2"]');
    await expect(second.getByTestId('approve-action')).toBeVisible();
    served.stillListed.add('a2');
    actions[1].status = 'discarded';
    await second.getByTestId('approve-action').click();
    await expect(second.getByTestId('action-error')).toHaveText(
      'This action no longer waits: already discarded.',
    );
    expect(served.approved).toEqual(['a1']);
  });
}
