import { MCP_TOOL_CHOICES } from '@metatronos/shared-types';
import {
  MCP_DEFAULT_TOOLS,
  isMcpExposable,
  mcpCallProblem,
  mcpInputSchema,
} from './mcp-exposure';
import { decideMcpOrigin } from './mcp-origin';
import { bearerOf } from './mcp-endpoint';

describe('what may be exposed over MCP', () => {
  it('offers exactly the console’s choices; the defaults read only', () => {
    for (const choice of MCP_TOOL_CHOICES)
      expect(isMcpExposable(choice.name)).toBe(true);
    expect(MCP_DEFAULT_TOOLS).toEqual([
      'memory_search',
      'read_file',
      'calendar_actions',
    ]);
  });

  it.each([
    'bash',
    'write_file',
    'whatsapp_send_message',
    'contacts_send',
    'email_actions',
    'url_fetch',
    'remember',
    'forget',
    'manage_cronjob',
    'whatsapp_manage_permission',
    'generate_image',
    'todo_update',
    'set_mode',
    '__proto__',
    'constructor',
  ])('never exposes %s', (name) => {
    expect(isMcpExposable(name)).toBe(false);
    expect(mcpCallProblem(name, {})).toBe(`${name} is not offered over MCP`);
  });

  it.each([
    ['calendar_actions', { action: 'list' }, null],
    [
      'calendar_actions',
      { action: 'create', title: 'x' },
      /only action "list"/,
    ],
    ['calendar_actions', { action: 'delete', id: '1' }, /only action "list"/],
    ['calendar_actions', {}, /only action "list"/],
    ['db_query', { operation: 'find', collection: 'x' }, null],
    ['db_query', { operation: 'aggregate', collection: 'x' }, null],
    [
      'db_query',
      { operation: 'insertOne', collection: 'ai_x' },
      /got "insertOne"/,
    ],
    [
      'db_query',
      { operation: 'deleteMany', collection: 'ai_x' },
      /only operation/,
    ],
    [
      'db_query',
      { operation: 'createIndex', collection: 'ai_x' },
      /only operation/,
    ],
    ['db_query', { operation: ['find'] }, /only operation/],
    ['memory_search', { query: 'x' }, null],
  ] as const)('%s %j → %s', (name, args, expected) => {
    const problem = mcpCallProblem(name, args);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('narrows the action argument of the schema an agent sees', () => {
    const schema = mcpInputSchema('calendar_actions', {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['list', 'create'] },
        title: { type: 'string' },
      },
    });
    expect(schema.properties['action']).toEqual({
      type: 'string',
      enum: ['list'],
    });
    expect(schema.required).toEqual(['action']);
  });
});

describe('decideMcpOrigin (DNS rebinding and cross-site)', () => {
  const policy = {
    allowedHosts: ['localhost', '127.0.0.1', '::1'],
    trustedOrigins: ['https://agents.example'],
  };
  const base = {
    protocol: 'http',
    host: '127.0.0.1:3000',
    secFetchSite: undefined,
  };
  it.each([
    [undefined, undefined, true],
    ['http://127.0.0.1:3000', undefined, true],
    ['http://localhost:3000', 'same-origin', true],
    ['https://agents.example', 'cross-site', true],
    ['http://evil.example', undefined, false],
    ['http://127.0.0.1:4000', undefined, false],
    ['https://127.0.0.1:3000', undefined, false],
    ['null', undefined, false],
    ['http://127.0.0.1:3000/path', undefined, false],
    [undefined, 'cross-site', false],
    [undefined, 'same-site', false],
    ['http://127.0.0.1:3000', 'cross-site', false],
  ])('Origin %s, Sec-Fetch-Site %s → allowed %s', (origin, site, allowed) => {
    expect(
      decideMcpOrigin({ ...base, origin, secFetchSite: site }, policy).allowed,
    ).toBe(allowed);
  });
});

describe('bearerOf', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer   abc  ', 'abc'],
    ['Basic abc', null],
    ['Bearer', null],
    ['Bearer a b', null],
    [undefined, null],
  ])('%j → %j', (header, token) => {
    expect(bearerOf(header)).toBe(token);
  });
});
