import { expect, ownerSession, test } from './support/fixtures';

test.describe('Settings → Connected agents', () => {
  test('creates a token shown once, an agent uses it over /mcp, the list counts it, revoke cuts it off', async ({
    page,
    baseURL,
  }) => {
    await ownerSession(page);
    await page.goto('/settings');
    const card = page.getByTestId('agents-card');
    await expect(card.getByTestId('agents-empty')).toHaveText(
      'No agent is connected.',
    );
    await expect(
      card.getByTestId('agents-tool-memory_search').locator('input'),
    ).toBeChecked();
    await expect(
      card.getByTestId('agents-tool-db_query').locator('input'),
    ).not.toBeChecked();

    await card.getByTestId('agents-name').fill('Desktop assistant');
    await card.getByTestId('agents-tool-read_file').locator('input').uncheck();
    await card.getByTestId('agents-create').click();
    const token = (
      await card.getByTestId('agents-token').textContent()
    )?.trim();
    expect(token).toMatch(/^mtr_mcp_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    await expect(card.getByTestId('agents-item-name')).toHaveText([
      'Desktop assistant',
    ]);
    await expect(card.getByTestId('agents-item-tools')).toContainText(
      'memory_search',
    );
    await expect(card.getByTestId('agents-item-tools')).not.toContainText(
      'read_file',
    );

    // The agent: a JSON-RPC call over Streamable HTTP with the bearer.
    const mcp = (body: object) =>
      fetch(new URL('/mcp', baseURL), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
      });
    const listed = await mcp({ method: 'tools/list', params: {} });
    expect(listed.status).toBe(200);
    const tools = (await listed.json()).result.tools.map(
      (t: { name: string }) => t.name,
    );
    expect(tools).toEqual(['memory_search']);
    const called = await mcp({
      method: 'tools/call',
      params: { name: 'memory_search', arguments: { query: 'milk' } },
    });
    expect((await called.json()).result.isError).toBeFalsy();

    await card.getByTestId('agents-created-done').click();
    await expect(card.getByTestId('agents-token')).toHaveCount(0);
    await page.reload();
    await expect(page.getByTestId('agents-item-calls')).toHaveText(
      '1 call (memory_search 1)',
    );
    await expect(page.getByTestId('agents-item-used')).toContainText(
      'last used',
    );
    await expect(page.getByTestId('agents-card')).not.toContainText(
      token as string,
    );

    await page.getByTestId('agents-revoke').click();
    await page.getByTestId('agents-revoke-confirm-button').click();
    await expect(page.getByTestId('agents-empty')).toBeVisible();
    const after = await mcp({ method: 'tools/list', params: {} });
    expect(after.status).toBe(401);
  });
});
