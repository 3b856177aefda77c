import type { Page } from '@playwright/test';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'automations' });

test.describe.configure({ mode: 'serial' });

/** "Mon 23 Nov, 08:00" as the console formats times in the owner's zone. */
const CONSOLE_TIME =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}$/;

/** Runs go to the fake OpenAI upstream. */
async function useFakeModel(page: Page): Promise<void> {
  const res = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-automations-4321',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(res.ok()).toBe(true);
}

test.describe('Automations', () => {
  test('a job: created with a live preview, run now, its history links to its chat, then deleted', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await useFakeModel(page);
    fake.openai.enqueue({
      text: ['Good morning! ', 'You have **2 meetings** today.'],
    });

    await page.goto('/chat');
    await page.getByTestId('nav-automations').click();
    await expect(page).toHaveURL(/\/automations$/);
    await expect(page.getByTestId('no-jobs')).toContainText(
      'every weekday at 8:00 summarise my schedule',
    );

    await page.getByTestId('new-job').click();
    await page.getByTestId('job-name-input').fill('Morning briefing');
    await page
      .getByTestId('job-instruction-input')
      .fill('Summarise my schedule for today.');
    await page.getByTestId('job-expression-input').fill('61 8 * * *');
    await expect(page.getByTestId('job-preview-error')).toBeVisible();
    await expect(page.getByTestId('save-job')).toBeDisabled();

    await page
      .getByTestId('job-preset')
      .filter({ hasText: 'Weekdays at 08:00' })
      .click();
    await expect(page.getByTestId('job-expression-input')).toHaveValue(
      '0 8 * * 1-5',
    );
    await expect(page.getByTestId('job-preview-description')).toContainText(
      '08:00',
    );
    await expect(page.getByTestId('job-preview-run')).toHaveCount(3);
    for (const time of await page
      .getByTestId('job-preview-run')
      .allTextContents()) {
      expect(time).toMatch(
        /^(Mon|Tue|Wed|Thu|Fri) \d{1,2} [A-Z][a-z]{2}, 08:00$/,
      );
    }
    await page.getByTestId('save-job').click();

    await expect(page.getByTestId('job-form')).toBeHidden();
    const job = page
      .getByTestId('job-item')
      .filter({ hasText: 'Morning briefing' });
    await expect(job.getByTestId('job-state')).toHaveText('Active');
    await expect(job.getByTestId('job-expression')).toHaveText('0 8 * * 1-5');
    await expect(job.getByTestId('job-next-run')).toHaveCount(3);
    await expect(job.getByTestId('job-next-run').first()).toHaveText(
      /, 08:00$/,
    );
    await expect(job.getByTestId('job-last-run')).toHaveText('Never');

    await job.getByTestId('toggle-history').click();
    await expect(job.getByTestId('no-runs')).toBeVisible();
    await job.getByTestId('run-job').click();
    const run = job.getByTestId('run-item').first();
    await expect(run).toHaveAttribute('data-outcome', 'success', {
      timeout: 15_000,
    });
    await expect(run.getByTestId('run-outcome')).toHaveText('Success');
    await expect(run.getByTestId('run-trigger')).toHaveText('Manual');
    await expect(run.getByTestId('run-started')).toHaveText(CONSOLE_TIME);
    await expect(job.getByTestId('job-last-run-outcome')).toHaveText('Success');
    await expect(job.getByTestId('job-running')).toBeHidden();
    expect(fake.openai.requests).toHaveLength(1);
    expect(JSON.stringify(fake.openai.requests[0].body.messages)).toContain(
      'Summarise my schedule for today.',
    );

    await run.getByTestId('run-chat-link').click();
    await expect(page).toHaveURL(/\/chat\/[0-9a-f]{24}$/);
    const chatId = new URL(page.url()).pathname.split('/').pop() as string;
    const reply = page.getByTestId('assistant-message').last();
    await expect(reply).toContainText(
      'Good morning! You have 2 meetings today.',
    );
    await expect(reply.locator('strong')).toHaveText('2 meetings');

    await page.getByTestId('nav-automations').click();
    await expect(job.getByTestId('job-chat-link')).toHaveAttribute(
      'href',
      `/chat/${chatId}`,
    );
    await job.getByTestId('delete-job').click();
    await expect(job.getByTestId('delete-job-confirm')).toContainText(
      'Its chat and its run history are deleted too.',
    );
    await job.getByTestId('confirm-delete-job').click();
    await expect(page.getByTestId('no-jobs')).toBeVisible();
    expect((await page.request.get('/api/cronjobs')).status()).toBe(200);
    expect(await (await page.request.get('/api/cronjobs')).json()).toEqual([]);
    expect(
      (
        await page.request.get(`/api/chats/${chatId}/messages?limit=1`)
      ).status(),
    ).toBe(404);
  });

  test('pulse: the card saves its settings and shows the next pulse', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await useFakeModel(page);
    fake.openai.fallback = { text: ['Nothing needs doing right now.'] };

    await page.goto('/automations');
    const card = page.getByTestId('pulse-card');
    await expect(card.getByTestId('pulse-next')).toHaveText('—');
    await expect(card.getByTestId('pulse-next-reason')).toHaveText(
      'Pulse is off',
    );

    await card.getByTestId('pulse-enabled-toggle').locator('button').click();
    await card.getByTestId('pulse-day').filter({ hasText: 'Sun' }).click();
    await expect(
      card.getByTestId('pulse-day').filter({ hasText: 'Sun' }),
    ).toHaveAttribute('aria-pressed', 'false');
    await card.getByTestId('pulse-per-day').selectOption('48');
    await card.getByTestId('add-quiet-hours').click();
    const added = card.getByTestId('quiet-hours-row').nth(1);
    await added.getByTestId('quiet-hours-start').fill('13:00');
    await added.getByTestId('quiet-hours-end').fill('12:00');
    await expect(added.getByTestId('quiet-hours-midnight')).toHaveText(
      'crosses midnight',
    );
    await added.getByTestId('quiet-hours-end').fill('14:00');
    await expect(added.getByTestId('quiet-hours-midnight')).toBeHidden();
    await card
      .getByTestId('pulse-notes-input')
      .fill('Water the tomatoes on Friday.');
    await expect(card.getByTestId('pulse-notes-counter')).toHaveText(
      '29 / 2000',
    );
    await card.getByTestId('save-pulse').click();

    await expect(page.locator('mat-snack-bar-container')).toContainText(
      'Pulse settings saved.',
    );
    await expect(card.getByTestId('pulse-unsaved')).toBeHidden();
    await expect(card.getByTestId('pulse-interval')).toHaveText('every 30 min');
    await expect(card.getByTestId('pulse-next')).toHaveText(CONSOLE_TIME);
    await expect(card.getByTestId('pulse-next-reason')).toBeHidden();

    const saved = await (await page.request.get('/api/pulse')).json();
    expect(saved).toMatchObject({
      enabled: true,
      activeDays: [1, 2, 3, 4, 5, 6],
      pulsesPerDay: 48,
      quietHours: [
        { start: '22:00', end: '07:00' },
        { start: '13:00', end: '14:00' },
      ],
      notes: 'Water the tomatoes on Friday.',
      intervalMinutes: 30,
    });

    await page.reload();
    await expect(card.getByTestId('pulse-per-day')).toHaveValue('48');
    await expect(card.getByTestId('pulse-notes-input')).toHaveValue(
      'Water the tomatoes on Friday.',
    );
    await expect(card.getByTestId('quiet-hours-row')).toHaveCount(2);

    // And off again.
    await card.getByTestId('pulse-enabled-toggle').locator('button').click();
    await card.getByTestId('save-pulse').click();
    await expect(card.getByTestId('pulse-next-reason')).toHaveText(
      'Pulse is off',
    );
  });
});
