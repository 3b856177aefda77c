import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getConnectionToken } from '@nestjs/mongoose';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from 'mongoose';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import {
  MCP_REQUESTS_PER_MINUTE,
  type McpTokenCreated,
  type McpTokenList,
} from '@metatronos/shared-types';
import { FileDirs } from '../src/files/file-dirs';
import { McpTokensService } from '../src/mcp-server/mcp-tokens.service';
import { createTestApp, type TestApp } from './support/test-app';

/**
 * Metatron as an MCP server: the SDK's own client against `/mcp` of the real
 * app on loopback, and the owner's token REST.
 */
describe('MCP server (/mcp) and its tokens', () => {
  let t: TestApp;
  let owner: TestAgent;
  let url: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    ({ url } = await t.serve());
    const state = t.app.get(FileDirs).stateDir;
    mkdirSync(state, { recursive: true });
    writeFileSync(join(state, 'TODO.md'), '- [ ] buy oat milk\n');
  }, 60_000);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await t?.close();
  });

  async function createToken(body: object): Promise<McpTokenCreated> {
    const res = await owner.post('/api/mcp/tokens').send(body).expect(201);
    return res.body as McpTokenCreated;
  }

  async function connect(
    token: string | null,
    headers: Record<string, string> = {},
  ): Promise<Client> {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: {
        headers: {
          ...(token && { Authorization: `Bearer ${token}` }),
          ...headers,
        },
      },
    });
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  async function tokens(): Promise<McpTokenList> {
    return (await owner.get('/api/mcp/tokens').expect(200))
      .body as McpTokenList;
  }

  function textOf(result: unknown): string {
    const content = (result as { content: Array<{ text: string }> }).content;
    return content[0].text;
  }

  it('lists only the allowed tools, with the action of a narrowed tool pinned', async () => {
    const { token, tools } = await createToken({ name: 'Desktop' });
    expect(tools).toEqual(['memory_search', 'read_file', 'calendar_actions']);
    const client = await connect(token);
    const listed = (await client.listTools()).tools.map((x) => x.name);
    // No calendar account here: the calendar tool is not usable, so not offered.
    expect(listed).toEqual(['memory_search', 'read_file']);

    const { token: dbToken } = await createToken({
      name: 'Analyst',
      tools: 'db_query',
    });
    const db = await connect(dbToken);
    const [dbTool] = (await db.listTools()).tools;
    expect(dbTool.name).toBe('db_query');
    expect(
      (dbTool.inputSchema.properties as Record<string, { enum: string[] }>)[
        'operation'
      ].enum,
    ).toEqual([
      'find',
      'findOne',
      'countDocuments',
      'aggregate',
      'listCollections',
    ]);
    expect(dbTool.annotations?.readOnlyHint).toBe(true);
  });

  it('calls a read tool through the registry and counts it against the token', async () => {
    const { id, token } = await createToken({
      name: 'IDE',
      tools: ['read_file', 'memory_search'],
    });
    const client = await connect(token);
    const read = await client.callTool({
      name: 'read_file',
      arguments: { path: 'file_state_dir/TODO.md' },
    });
    expect(read.isError).toBeFalsy();
    expect(JSON.parse(textOf(read))).toMatchObject({
      content: '- [ ] buy oat milk\n',
    });
    const search = await client.callTool({
      name: 'memory_search',
      arguments: { query: 'oat milk' },
    });
    expect(search.isError).toBeFalsy();
    expect(JSON.parse(textOf(search))).toHaveProperty('results');
    // Arguments the tool's schema refuses come back as a tool error, counted as one.
    const bad = await client.callTool({
      name: 'read_file',
      arguments: { path: 42 },
    });
    expect(bad.isError).toBe(true);

    const row = (await tokens()).tokens.find((x) => x.id === id);
    expect(row).toMatchObject({
      name: 'IDE',
      calls: 3,
      errors: 1,
      callsByTool: { read_file: 2, memory_search: 1 },
    });
    expect(row?.lastUsedAt).not.toBeNull();
  });

  it('refuses a tool outside the token, a tool never exposed, and a writing action of a narrowed tool', async () => {
    const { id, token } = await createToken({
      name: 'Narrow',
      tools: ['memory_search', 'db_query'],
    });
    const client = await connect(token);
    for (const [name, args] of [
      ['read_file', { path: 'file_state_dir/TODO.md' }],
      ['bash', { command: 'id' }],
      ['whatsapp_send_message', { phone: '+15550100', text: 'hi' }],
      ['no_such_tool', {}],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      expect(JSON.parse(textOf(result)).error).toBe(
        `Tool '${name}' is not available to this agent`,
      );
    }
    // db_query writes to ai_* have no outward effect for the policy: the MCP narrowing is the wall.
    const write = await client.callTool({
      name: 'db_query',
      arguments: {
        operation: 'insertOne',
        collection: 'ai_notes',
        data: { text: 'planted' },
      },
    });
    expect(write.isError).toBe(true);
    expect(JSON.parse(textOf(write)).error).toMatch(
      /^over MCP, db_query takes only operation "find"/,
    );
    const connection = t.app.get<Connection>(getConnectionToken());
    expect(await connection.db?.collection('ai_notes').countDocuments()).toBe(
      0,
    );
    const find = await client.callTool({
      name: 'db_query',
      arguments: { operation: 'find', collection: 'chats', filter: {} },
    });
    expect(find.isError).toBeFalsy();

    const row = (await tokens()).tokens.find((x) => x.id === id);
    expect(row).toMatchObject({ calls: 6, errors: 5 });
    expect(row?.callsByTool).toEqual({ db_query: 2 });
  });

  it('refuses a revoked token at once, an unknown one, and a request without one (401 with WWW-Authenticate)', async () => {
    const { id, token } = await createToken({ name: 'Soon gone' });
    const client = await connect(token);
    await client.listTools();
    await owner.delete(`/api/mcp/tokens/${id}`).expect(204);
    await expect(client.listTools()).rejects.toThrow(/401|revoked/i);
    await expect(connect(token)).rejects.toThrow();
    expect((await tokens()).tokens.some((x) => x.id === id)).toBe(false);
    await owner.delete(`/api/mcp/tokens/${id}`).expect(404);

    const none = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      .expect(401);
    expect(none.headers['www-authenticate']).toBe(
      'Bearer realm="MetatronOS MCP"',
    );
    await expect(connect(null)).rejects.toThrow();

    // The right shape with a secret that does not match, and a revoked one.
    const forged = token.replace(/_[^_]{4}$/, '_AAAA');
    for (const bad of [forged, token, 'mtr_mcp_nonsense', 'x'.repeat(5000)]) {
      const res = await request(t.app.getHttpServer())
        .get('/mcp')
        .set('Authorization', `Bearer ${bad}`)
        .expect(401);
      expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
  });

  it('a token may expire (expiresInDays as a number or a numeric string, or expiresAt): listed with its date, then refused like a revoked one', async () => {
    const day = 24 * 60 * 60_000;
    const soon = await createToken({ name: 'Month', expiresInDays: '30' });
    expect(Date.parse(soon.expiresAt as string)).toBe(
      t.clock.now().getTime() + 30 * day,
    );
    const quarter = await createToken({ name: 'Quarter', expiresInDays: 90 });
    const at = new Date(t.clock.now().getTime() + 10 * day).toISOString();
    const dated = await createToken({ name: 'Dated', expiresAt: at });
    expect(dated.expiresAt).toBe(at);
    const never = await createToken({ name: 'Never', expiresInDays: null });
    expect(never.expiresAt).toBeNull();
    const listed = (await tokens()).tokens;
    expect(listed.find((x) => x.id === quarter.id)).toMatchObject({
      expiresAt: quarter.expiresAt,
      expired: false,
    });
    expect(listed.find((x) => x.id === never.id)?.expiresAt).toBeNull();

    const client = await connect(soon.token);
    await client.listTools();
    // Its time comes (the app's clock is a manual one; set back after, for the owner's session).
    const start = t.clock.now();
    t.clock.advance(30 * day + 60_000);
    const refused = await request(t.app.getHttpServer())
      .get('/mcp')
      .set('Authorization', `Bearer ${soon.token}`)
      .expect(401);
    expect(refused.headers['www-authenticate']).toMatch(
      /error="invalid_token"/,
    );
    await expect(connect(soon.token)).rejects.toThrow();
    const after = (await t.app.get(McpTokensService).list()).tokens;
    expect(after.find((x) => x.id === soon.id)?.expired).toBe(true);
    // A date 10 days away has passed too; one 90 days away and never have not.
    expect(after.find((x) => x.id === dated.id)?.expired).toBe(true);
    expect(after.find((x) => x.id === quarter.id)?.expired).toBe(false);
    await (await connect(never.token)).listTools();
    await (await connect(quarter.token)).listTools();
    t.clock.set(start);
    for (const { id } of [soon, quarter, dated, never])
      await owner.delete(`/api/mcp/tokens/${id}`).expect(204);
  });

  it('a revoke cuts the token’s requests in flight', async () => {
    const { id } = await createToken({ name: 'Busy' });
    const service = t.app.get(McpTokensService);
    const cut = jest.fn();
    const other = jest.fn();
    service.track(id, cut);
    const { id: otherId } = await createToken({ name: 'Other' });
    service.track(otherId, other);
    await owner.delete(`/api/mcp/tokens/${id}`).expect(204);
    expect(cut).toHaveBeenCalledTimes(1);
    expect(other).not.toHaveBeenCalled();
  });

  it('refuses a foreign Origin and a cross-site browser request on every method, and an unknown Host', async () => {
    const { token } = await createToken({ name: 'Browser' });
    await expect(
      connect(token, { Origin: 'http://evil.example' }),
    ).rejects.toThrow(/403/);
    const server = t.app.getHttpServer();
    for (const method of ['get', 'post', 'delete'] as const) {
      const res = await request(server)
        [method]('/mcp')
        .set('Authorization', `Bearer ${token}`)
        .set('Origin', 'http://attacker.localhost:3000')
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream');
      expect(res.status).toBe(403);
    }
    const site = await request(server)
      .get('/mcp')
      .set('Authorization', `Bearer ${token}`)
      .set('Sec-Fetch-Site', 'cross-site');
    expect(site.status).toBe(403);
    await request(server)
      .get('/mcp')
      .set('Host', 'rebound.example')
      .set('Authorization', `Bearer ${token}`)
      .expect(421);
    // The console's own origin is fine.
    const own = new URL(url).origin;
    const client = await connect(token, { Origin: own });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('limits each token to its requests per minute (429 with Retry-After), not the others', async () => {
    const { token } = await createToken({ name: 'Chatty' });
    const { token: quiet } = await createToken({ name: 'Quiet' });
    const server = t.app.getHttpServer();
    const hit = (bearer: string) =>
      request(server).get('/mcp').set('Authorization', `Bearer ${bearer}`);
    for (let i = 0; i < MCP_REQUESTS_PER_MINUTE; i++)
      expect((await hit(token)).status).toBe(405);
    const limited = await hit(token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await hit(quiet)).status).toBe(405);
    t.clock.advance(60_001);
    expect((await hit(token)).status).toBe(405);
  });

  it('answers GET and DELETE /mcp itself with 405 (stateless: no stream, no session), never with the console page', async () => {
    const { token } = await createToken({ name: 'Getter' });
    for (const method of ['get', 'delete'] as const) {
      const res = await request(t.app.getHttpServer())
        [method]('/mcp')
        .set('Authorization', `Bearer ${token}`)
        .set('Accept', 'text/event-stream');
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('POST');
      expect(res.text).not.toContain('<mt-root>');
    }
  });

  it('creates tokens from one name or a list, shows the token once, stores only its hash', async () => {
    const created = await createToken({
      name: '  Phone  ',
      tools: 'memory_search',
    });
    expect(created).toEqual({
      expiresAt: null,
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      token: expect.stringMatching(/^mtr_mcp_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/),
      name: 'Phone',
      tools: ['memory_search'],
    });
    const listed = await owner.get('/api/mcp/tokens').expect(200);
    const secret = created.token.slice(-43);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain('secretHash');
    expect((listed.body as McpTokenList).choices.map((c) => c.name)).toEqual([
      'memory_search',
      'read_file',
      'calendar_actions',
      'db_query',
    ]);
    const connection = t.app.get<Connection>(getConnectionToken());
    const stored = await connection.db
      ?.collection('auth_mcp_tokens')
      .findOne({ _id: created.id as never });
    expect(stored?.['secretHash']).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it.each([
    [{}, /name/],
    [{ name: '' }, /name/],
    [{ name: 'x'.repeat(61) }, /name/],
    [{ name: 42 }, /name/],
    [{ name: 'a\u0000b' }, /control characters/],
    [{ name: 'ok', tools: 'no_such_tool' }, /Unknown tool "no_such_tool"/],
    [
      { name: 'ok', tools: ['memory_search', 'bash'] },
      /bash is never offered over MCP/,
    ],
    [{ name: 'ok', tools: 'whatsapp_send_message' }, /never offered/],
    [{ name: 'ok', tools: 'write_file' }, /never offered/],
    [{ name: 'ok', tools: [] }, /at least one tool/],
    [{ name: 'ok', tools: 7 }, /tools/],
    [{ name: 'ok', tools: [7] }, /tools/],
    [{ name: 'ok', extra: true }, /extra/],
    [{ name: 'ok', expiresInDays: 0 }, /expiresInDays must be a positive/],
    [{ name: 'ok', expiresInDays: -5 }, /expiresInDays/],
    [{ name: 'ok', expiresInDays: 'soon' }, /expiresInDays/],
    [{ name: 'ok', expiresInDays: 5000 }, /at most 3650/],
    [{ name: 'ok', expiresInDays: [30] }, /expiresInDays/],
    [{ name: 'ok', expiresAt: 'tomorrow' }, /expiresAt must be an ISO date/],
    [{ name: 'ok', expiresAt: '2001-01-01' }, /in the future/],
    [{ name: 'ok', expiresInDays: 30, expiresAt: '2099-01-01' }, /not both/],
  ])('refuses %j with 400 and writes nothing', async (body, message) => {
    const before = (await tokens()).tokens.length;
    const res = await owner.post('/api/mcp/tokens').send(body).expect(400);
    expect([res.body.message].flat().join(' | ')).toMatch(message);
    expect((await tokens()).tokens.length).toBe(before);
  });

  it('keeps the token REST for the owner only', async () => {
    await request(t.app.getHttpServer()).get('/api/mcp/tokens').expect(401);
    await request(t.app.getHttpServer())
      .post('/api/mcp/tokens')
      .send({ name: 'sneaky' })
      .expect(401);
  });
});
