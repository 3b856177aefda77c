import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'modes' });

test.describe.configure({ mode: 'serial' });

test.describe('Modes', () => {
  test('the chip shows the mode, the owner switches it, and a switch by the model shows as an event line', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await page.request.patch('/api/settings', {
      data: {
        openaiApiKey: 'sk-e2e-openai-key-7890',
        primaryModel: 'gpt-4.1-mini',
      },
    });
    // A stored chat (the New chat button opens a draft, stored with its first message).
    const created = await page.request.post('/api/chats', { data: {} });
    expect(created.status()).toBe(201);
    await page.goto(`/chat/${((await created.json()) as { id: string }).id}`);
    await expect(page).toHaveURL(/\/chat\/[0-9a-f]{24}$/);
    const chip = page.getByTestId('mode-chip');
    await expect(chip).toContainText('Default mode');

    // The owner switches: the menu lists the modes with their descriptions.
    await chip.click();
    const data = page.getByTestId('mode-option-data');
    await expect(data).toContainText('Data mode');
    await expect(data).toContainText('Looks up and changes your own data');
    await data.click();
    await expect(chip).toContainText('Data mode');
    await expect(page.getByTestId('mode-event')).toHaveText(
      'You switched to Data mode',
    );

    // The model switches within its reply.
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'set_mode',
            arguments: { mode: 'automations' },
          },
        ],
      },
      { text: ['Ready for your jobs.'] },
    );
    await page.getByTestId('composer-input').fill('Let us look at my jobs');
    await page.getByTestId('composer-input').press('Enter');
    await expect(page.getByTestId('mode-event').last()).toHaveText(
      'Switched to Automations mode',
    );
    await expect(chip).toContainText('Automations mode');
    const second = fake.openai.requests
      .at(-1)
      ?.body.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(second).toEqual(['set_mode', 'manage_cronjob', 'manage_pulse']);
  });

  test('the Tools page lists the modes and their tools, and a switch turns a tool off', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/tools');
    const card = page.getByTestId('tool-modes-card');
    await expect(card.getByTestId('mode-data')).toContainText('db_query');
    // Web search works without a key (DuckDuckGo): the web mode lists both its tools.
    await expect(card.getByTestId('mode-web')).toContainText('web_search');
    await expect(card.getByTestId('mode-web')).toContainText('url_fetch');
    // Tools and modes are named in words for the owner; ids stay beside, smaller.
    await expect(
      card.getByTestId('tool-web_search').getByTestId('tool-title'),
    ).toHaveText('Search the web');
    await expect(card.getByTestId('mode-whatsapp')).toContainText(
      'WhatsApp mode',
    );
    await expect(card).not.toContainText('Whatsapp mode');
    await card
      .getByTestId('tool-switch-save_memory')
      .getByRole('switch')
      .click();
    await expect
      .poll(
        async () =>
          (await (await page.request.get('/api/settings')).json())
            .disabledTools,
      )
      .toEqual(['save_memory']);
    await page.reload();
    await expect(
      page.getByTestId('tool-switch-save_memory').getByRole('switch'),
    ).toHaveAttribute('aria-checked', 'false');
  });
});
