import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import request from 'supertest';
import type { McpServerView, McpSignInStarted } from '@metatronos/shared-types';
import { ToolTurn } from '../src/actions/tool-turn';
import type { AiToolContext } from '../src/ai-tools/ai-tool';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { KnownSecrets } from '../src/secrets/known-secrets';
import { SettingsService } from '../src/settings/settings.service';
import {
  startFakeAuthServer,
  startOAuthMcpServer,
  startTrap,
  type FakeAuthServer,
  type FakeOAuthMcpServer,
} from '../../../tools/fake-oauth/fake-oauth-servers';
import { createTestApp, type TestApp } from './support/test-app';
import { sharedTestDatabase } from './support/test-database';

async function waitFor<T>(
  check: () => Promise<T | null | undefined | false>,
  what: string,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The authorization server's answer to the sign-in page: where it sends the browser back. */
async function approve(authorizationUrl: string): Promise<string> {
  const answer = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get('location') as string);
  return `${back.pathname}${back.search}`;
}

describe('MCP servers behind OAuth 2.1 (PKCE): sign in from the console', () => {
  let t: TestApp;
  let owner: TestAgent;
  let as: FakeAuthServer;
  let mcp: FakeOAuthMcpServer;
  let registry: AiToolRegistry;

  beforeAll(async () => {
    as = await startFakeAuthServer();
    mcp = await startOAuthMcpServer(as, [as.issuer]);
    t = await createTestApp();
    owner = await t.owner();
    registry = t.app.get(AiToolRegistry);
  });
  afterAll(async () => {
    await t.close();
    await mcp.close();
    await as.close();
  });

  async function context(): Promise<AiToolContext> {
    return {
      source: 'chat',
      settings: await t.app.get(SettingsService).get(),
      chatId: null,
      messageId: null,
      signal: new AbortController().signal,
      turn: new ToolTurn({ source: 'chat', runId: null }),
    };
  }

  const server = async (name: string): Promise<McpServerView> =>
    (await owner.get(`/api/mcp/servers/${name}`).expect(200)).body;

  const allow = () => [`127.0.0.1:${mcp.port}`, `127.0.0.1:${as.port}`];

  async function signIn(name: string): Promise<McpServerView> {
    const started = (
      await owner.post(`/api/mcp/servers/${name}/sign-in`).expect(200)
    ).body as McpSignInStarted;
    expect(started.authorizationUrl).toBeTruthy();
    const back = await approve(started.authorizationUrl as string);
    const page = await owner.get(back).expect(200);
    expect(page.text).toContain(`Signed in to ${name}`);
    return server(name);
  }

  it('a server that answers 401 needs sign-in; nothing is registered until the owner signs in', async () => {
    const added = await owner
      .post('/api/mcp/servers')
      .send({
        name: 'notes',
        url: mcp.url,
        headers: { 'X-Team': 'team-header-secret-4321' },
        allowHosts: allow(),
      })
      .expect(201);
    const view = added.body as McpServerView;
    expect(view.status).toMatchObject({
      state: 'needs-sign-in',
      message: 'the server asks you to sign in (OAuth)',
    });
    expect(view.oauth).toMatchObject({
      signedIn: false,
      accessToken: null,
      pending: false,
    });
    expect(as.clients).toEqual([]);
    // Not retried on its own: only the owner can sign in.
    expect(view.status.retryAt).toBeNull();
  });

  it('signs in (registration, PKCE S256, state, callback) and then lists and calls the tools', async () => {
    const started = (
      await owner.post('/api/mcp/servers/notes/sign-in').expect(200)
    ).body as McpSignInStarted;
    const page = new URL(started.authorizationUrl as string);
    expect(page.origin).toBe(as.issuer);
    expect(page.searchParams.get('code_challenge_method')).toBe('S256');
    expect(page.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.searchParams.get('redirect_uri')).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/api\/mcp\/oauth\/callback$/,
    );
    expect(page.searchParams.get('resource')).toBe(mcp.url);
    expect(as.clients).toHaveLength(1);
    expect(started.server.oauth).toMatchObject({ pending: true });

    const back = await approve(page.href);
    const done = await owner.get(back).expect(200);
    expect(done.headers['content-type']).toMatch(/text\/html/);
    expect(done.text).toContain('Signed in to notes');

    const view = await waitFor(async () => {
      const v = await server('notes');
      return v.status.state === 'ready' ? v : null;
    }, 'the signed-in server to be ready');
    expect(view.status.message).toBe('ready with 1 tool');
    expect(view.tools.map((tool) => tool.fullName)).toEqual(['notes_search']);
    const token = as.issued.at(-1) as string;
    expect(view.oauth).toMatchObject({
      signedIn: true,
      issuer: expect.stringContaining(as.issuer),
      accessToken: `••••${token.slice(-4)}`,
      refreshable: true,
      scope: 'notes',
      pending: false,
    });
    expect(Date.parse(view.oauth?.expiresAt as string)).toBeGreaterThan(
      Date.now(),
    );

    const outcome = await registry.call(
      'notes_search',
      { query: 'rivers' },
      await context(),
    );
    expect(outcome.result).toContain('notes about rivers');
    expect(mcp.bearers.at(-1)).toBe(token);

    // The same redirect again: its state was used once.
    await owner.get(back).expect(400);
  });

  it('never shows a token, a refresh token or the verifier in a response', async () => {
    const db = t.app.get<Connection>(getConnectionToken());
    const stored = await db.collection('mcp_oauth').findOne({});
    const tokens = JSON.parse(stored?.tokensJson as string) as {
      access_token: string;
      refresh_token: string;
    };
    const client = JSON.parse(stored?.clientJson as string) as {
      client_id: string;
    };
    const list = await owner.get('/api/mcp/servers').expect(200);
    const one = await owner.get('/api/mcp/servers/notes').expect(200);
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(tokens.access_token);
      expect(text).not.toContain(tokens.refresh_token);
      expect(text).not.toContain(client.client_id);
    }
    // The model cannot read the collection either.
    const query = await registry.call(
      'db_query',
      { operation: 'find', collection: 'mcp_oauth', filter: {} },
      await context(),
    );
    expect(query.result).not.toContain(tokens.access_token);
  });

  it('refreshes an expired access token with the refresh token (the SDK flow), without the owner', async () => {
    const before = as.issued.length;
    as.expireAccessTokens();
    const outcome = await registry.call(
      'notes_search',
      { query: 'lakes' },
      await context(),
    );
    expect(outcome.result).toContain('notes about lakes');
    expect(as.issued.length).toBe(before + 1);
    const grants = as.seen
      .filter((r) => r.path === '/token')
      .map((r) => new URLSearchParams(r.body).get('grant_type'));
    expect(grants.at(-1)).toBe('refresh_token');
    expect(mcp.bearers.at(-1)).toBe(as.issued.at(-1));
    const view = await server('notes');
    expect(view.oauth?.accessToken).toBe(
      `••••${(as.issued.at(-1) as string).slice(-4)}`,
    );
    // The owner's headers went to the MCP server only, never to the authorization server.
    expect(mcp.headers.at(-1)?.['x-team']).toBe('team-header-secret-4321');
    expect(as.seen.length).toBeGreaterThan(0);
    expect(as.seen.filter((r) => r.headers['x-team'])).toEqual([]);
  });

  it('OAuth tokens are known secrets: write_file refuses them', async () => {
    const token = as.issued.at(-1) as string;
    expect(await t.app.get(KnownSecrets).values()).toContain(token);
    const written = await registry.call(
      'write_file',
      { path: 'leak.txt', content: `the token is ${token}` },
      await context(),
    );
    expect(written.result).toContain('carries a secret');
  });

  it('a wrong or missing state is refused with 400; without a session the page reloads itself once, then 401', async () => {
    const wrong = await owner
      .get(`/api/mcp/oauth/callback?code=abc&state=${'A'.repeat(43)}`)
      .expect(400);
    expect(wrong.text).toContain('not valid or has expired');
    await owner.get('/api/mcp/oauth/callback?code=abc&state=short').expect(400);
    await owner.get('/api/mcp/oauth/callback?code=abc').expect(400);

    const started = (
      await owner.post('/api/mcp/servers/notes/sign-in').expect(200)
    ).body as McpSignInStarted;
    const back = await approve(started.authorizationUrl as string);
    // A browser arriving from another site without the Strict cookie: one same-origin reload.
    const hop = await request(t.app.getHttpServer()).get(back).expect(200);
    expect(hop.text).toContain('http-equiv="refresh"');
    expect(hop.text).toContain('hop=1');
    await request(t.app.getHttpServer()).get(`${back}&hop=1`).expect(401);
    // Neither consumed the state: the owner's own navigation finishes it.
    await owner.get(back).expect(200);
    expect((await server('notes')).status.state).toBe('ready');
  });

  it('a code exchanged with the wrong PKCE verifier is refused: no token is stored, the server still needs sign-in', async () => {
    // The fake checks S256 itself: a verifier that does not match is an invalid_grant.
    const signOut = await owner
      .post('/api/mcp/servers/notes/sign-out')
      .expect(200);
    expect(signOut.body.oauth).toMatchObject({
      signedIn: false,
      accessToken: null,
    });
    expect(signOut.body.status.state).toBe('needs-sign-in');
    const started = (
      await owner.post('/api/mcp/servers/notes/sign-in').expect(200)
    ).body as McpSignInStarted;
    as.corruptNextChallenge();
    const issued = as.issued.length;
    const back = await approve(started.authorizationUrl as string);
    const refused = await owner.get(back).expect(400);
    expect(refused.text).toContain('Sign-in failed');
    expect(refused.text).toMatch(/invalid_grant|does not match/);
    expect(as.issued.length).toBe(issued);
    const view = await server('notes');
    expect(view.oauth?.signedIn).toBe(false);
    expect(view.status.state).toBe('needs-sign-in');

    // The fake's own check, directly: the right code with a wrong verifier.
    const direct = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'code-unknown',
        code_verifier: 'x'.repeat(50),
        client_id: as.clients[0].client_id,
        redirect_uri: as.clients[0].redirect_uris[0],
      }),
    });
    expect(direct.status).toBe(400);

    // Signing in again works, and sign-out forgets the tokens (no longer known secrets).
    const signed = await signIn('notes');
    expect(signed.oauth?.signedIn).toBe(true);
    const token = as.issued.at(-1) as string;
    await owner.post('/api/mcp/servers/notes/sign-out').expect(200);
    expect(await t.app.get(KnownSecrets).values()).not.toContain(token);
    await owner.post('/api/mcp/servers/notes/sign-in').expect(200);
  });

  it('an authorization server outside the allowed hosts is refused, and no request (no token) goes there', async () => {
    // 127.0.0.2 is loopback, but not in this server's allowHosts.
    const trap = await startTrap('127.0.0.2');
    const elsewhere = await startOAuthMcpServer(as, [trap.origin]);
    try {
      const added = await owner
        .post('/api/mcp/servers')
        .send({
          name: 'elsewhere',
          url: elsewhere.url,
          allowHosts: [`127.0.0.1:${elsewhere.port}`, `127.0.0.1:${as.port}`],
        })
        .expect(201);
      expect(added.body.status.state).toBe('error');
      expect(added.body.status.message).toContain(
        `refused: the authorization server 127.0.0.2:${trap.port}`,
      );
      await owner.post('/api/mcp/servers/elsewhere/sign-in').expect(400);
      expect(trap.seen).toEqual([]);
    } finally {
      await owner.delete('/api/mcp/servers/elsewhere');
      await elsewhere.close();
      await trap.close();
    }
  });

  it('a token endpoint on a host outside the allowed set is refused before any code or token is sent', async () => {
    const trap = await startTrap('127.0.0.2');
    const rogue = await startFakeAuthServer({
      metadata: { token_endpoint: `${trap.origin}/token` },
    });
    const target = await startOAuthMcpServer(rogue, [rogue.issuer]);
    try {
      const added = await owner
        .post('/api/mcp/servers')
        .send({
          name: 'rogue',
          url: target.url,
          allowHosts: [`127.0.0.1:${target.port}`, `127.0.0.1:${rogue.port}`],
        })
        .expect(201);
      expect(added.body.status.state).toBe('error');
      expect(added.body.status.message).toContain(
        `refused: the token endpoint 127.0.0.2:${trap.port}`,
      );
      const refused = await owner
        .post('/api/mcp/servers/rogue/sign-in')
        .expect(400);
      expect(refused.body.message).toContain('refused: the token endpoint');
      expect(rogue.clients).toEqual([]);
      expect(trap.seen).toEqual([]);
    } finally {
      await owner.delete('/api/mcp/servers/rogue');
      await target.close();
      await rogue.close();
      await trap.close();
    }
  });

  it('sign-in is only for HTTP servers without their own Authorization header', async () => {
    await owner.post('/api/mcp/servers/nothing/sign-in').expect(404);
    await owner
      .post('/api/mcp/servers')
      .send({
        name: 'keyed',
        url: mcp.url,
        headers: { Authorization: 'Bearer owner-set-token-5678' },
        allowHosts: allow(),
      })
      .expect(201);
    const refused = await owner
      .post('/api/mcp/servers/keyed/sign-in')
      .expect(400);
    expect(refused.body.message).toContain('Authorization header you set');
    const view = await server('keyed');
    expect(view.status.state).toBe('error');
    expect(view.status.message).toContain('401');
    // The header value is a known secret too.
    expect(await t.app.get(KnownSecrets).values()).toContain(
      'Bearer owner-set-token-5678',
    );
    await owner.delete('/api/mcp/servers/keyed').expect(204);
  });

  it('a restart keeps the sign-in: the server connects with the stored tokens, no sign-in asked', async () => {
    await signIn('notes');
    const dbName = t.app.get<Connection>(getConnectionToken()).name;
    const again = await createTestApp({
      now: t.clock.now(),
      database: sharedTestDatabase(dbName),
    });
    try {
      const agent = await again.owner();
      const notes = await waitFor(async () => {
        const view = (await agent.get('/api/mcp/servers/notes').expect(200))
          .body as McpServerView;
        return view.status.state === 'ready' ? view : null;
      }, 'notes after the restart');
      expect(notes.oauth).toMatchObject({ signedIn: true, refreshable: true });
      const outcome = await again.app.get(AiToolRegistry).call(
        'notes_search',
        { query: 'again' },
        {
          ...(await context()),
          settings: await again.app.get(SettingsService).get(),
        },
      );
      expect(outcome.result).toContain('notes about again');
    } finally {
      await again.close();
    }
  });
});
