import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { McpTokenCreated, McpTokenList } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { ConnectedAgentsCard, MCP_TOKENS_URL } from './connected-agents-card';

const CHOICES: McpTokenList['choices'] = [
  { name: 'memory_search', label: 'Search memory', byDefault: true },
  { name: 'read_file', label: 'Read files', byDefault: true },
  { name: 'db_query', label: 'Read the database', byDefault: false },
];

const LIST: McpTokenList = {
  choices: CHOICES,
  tokens: [
    {
      id: 'a'.repeat(24),
      name: 'Desktop',
      tools: ['memory_search', 'read_file'],
      createdAt: '2026-03-01T10:00:00.000Z',
      expiresAt: null,
      expired: false,
      lastUsedAt: null,
      calls: 3,
      errors: 1,
      callsByTool: { read_file: 2 },
    },
  ],
};

describe('ConnectedAgentsCard', () => {
  let fixture: ComponentFixture<ConnectedAgentsCard>;
  let http: HttpTestingController;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();

  beforeEach(async () => {
    ({ http } = setUpApiTest(ConnectedAgentsCard));
    fixture = TestBed.createComponent(ConnectedAgentsCard);
    await stable();
    http.expectOne(MCP_TOKENS_URL).flush(LIST);
    await stable();
  });
  afterEach(() => tearDownApiTest(http));

  function checkbox(name: string): HTMLInputElement {
    return el(`agents-tool-${name}`)?.querySelector(
      'input',
    ) as HTMLInputElement;
  }

  async function typeName(value: string): Promise<void> {
    const input = el<HTMLInputElement>('agents-name') as HTMLInputElement;
    input.value = value;
    input.dispatchEvent(new Event('input'));
    await stable();
  }

  it('lists the tokens with last use and counts, never a token', () => {
    expect(texts('agents-item-name')).toEqual(['Desktop']);
    expect(text('agents-item-used')).toBe('never used');
    expect(text('agents-item-expiry')).toBe('never expires');
    expect(text('agents-item-calls')).toBe(
      '3 calls, 1 refused or failed (read_file 2)',
    );
    expect(all('agents-item-tools')[0].querySelectorAll('code').length).toBe(2);
    expect(text('agents-item-tools')).toContain('memory_search');
    expect(el('agents-token')).toBeNull();
  });

  it('creates a token with a name and the picked tools, shows it once with a copy button', async () => {
    expect(checkbox('memory_search').checked).toBe(true);
    expect(checkbox('db_query').checked).toBe(false);
    const create = el<HTMLButtonElement>('agents-create') as HTMLButtonElement;
    expect(create.disabled).toBe(true);
    await typeName('  IDE  ');
    checkbox('read_file').click();
    checkbox('db_query').click();
    await stable();
    expect(create.disabled).toBe(false);
    create.click();
    await stable();

    const post = http.expectOne(
      (r) => r.method === 'POST' && r.url === MCP_TOKENS_URL,
    );
    // 90 days unless the owner picks another expiry.
    expect(post.request.body).toEqual({
      name: 'IDE',
      tools: ['memory_search', 'db_query'],
      expiresInDays: 90,
    });
    const created: McpTokenCreated = {
      id: 'b'.repeat(24),
      token: `mtr_mcp_${'b'.repeat(24)}_${'s'.repeat(43)}`,
      name: 'IDE',
      tools: ['memory_search', 'db_query'],
      expiresAt: '2026-06-01T10:00:00.000Z',
    };
    post.flush(created);
    await stable();
    http.expectOne(MCP_TOKENS_URL).flush({
      ...LIST,
      tokens: [
        {
          ...LIST.tokens[0],
          id: created.id,
          name: 'IDE',
          calls: 0,
          errors: 0,
          callsByTool: {},
          tools: created.tools,
          expiresAt: created.expiresAt,
        },
        ...LIST.tokens,
      ],
    });
    await stable();

    expect(text('agents-token')).toBe(created.token);
    expect(
      el('agents-created')?.querySelector('[data-testid="copy-button"]'),
    ).not.toBeNull();
    expect(texts('agents-item-name')).toEqual(['IDE', 'Desktop']);
    expect(texts('agents-item-expiry')[0]).toMatch(/^expires /);
    (el('agents-created-done') as HTMLButtonElement).click();
    await stable();
    expect(el('agents-token')).toBeNull();
    expect(root().textContent).not.toContain(created.token);
  });

  it('offers 30 / 90 days / 1 year / never, and sends null for never', async () => {
    const select = el<HTMLSelectElement>('agents-expiry') as HTMLSelectElement;
    expect(
      Array.from(select.options).map((o) => o.textContent?.trim()),
    ).toEqual(['30 days', '90 days', '1 year', 'Never']);
    expect(select.value).toBe('90');
    select.value = 'never';
    select.dispatchEvent(new Event('change'));
    await typeName('Forever');
    (el('agents-create') as HTMLButtonElement).click();
    await stable();
    const post = http.expectOne((r) => r.method === 'POST');
    expect(post.request.body).toMatchObject({ expiresInDays: null });
    post.flush(
      { statusCode: 400, message: 'no', error: 'Bad Request' },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
  });

  it('shows an expired token as expired', async () => {
    fixture.componentInstance['tokens'].set([
      {
        ...LIST.tokens[0],
        expiresAt: '2026-03-02T10:00:00.000Z',
        expired: true,
      },
    ]);
    await stable();
    expect(text('agents-item-expiry')).toMatch(/^expired /);
  });

  it('shows the server’s reason when a create is refused', async () => {
    await typeName('IDE');
    (el('agents-create') as HTMLButtonElement).click();
    await stable();
    http
      .expectOne((r) => r.method === 'POST')
      .flush(
        {
          statusCode: 400,
          message: 'bash is never offered over MCP',
          error: 'Bad Request',
        },
        { status: 400, statusText: 'Bad Request' },
      );
    await stable();
    expect(text('agents-error')).toContain('bash is never offered over MCP');
  });

  it('revokes a token after a confirmation', async () => {
    (el('agents-revoke') as HTMLButtonElement).click();
    await stable();
    expect(text('agents-revoke-confirm')).toContain(
      'Revoke the token of Desktop?',
    );
    (el('agents-revoke-confirm-button') as HTMLButtonElement).click();
    await stable();
    const del = http.expectOne(
      (r) =>
        r.method === 'DELETE' &&
        r.url === `${MCP_TOKENS_URL}/${'a'.repeat(24)}`,
    );
    del.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(all('agents-item')).toHaveLength(0);
    expect(text('agents-empty')).toBe('No agent is connected.');
  });
});
