import { createHash, randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A request one of the fakes received. */
export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeAuthServerOptions {
  /** Loopback address to listen on (127.0.0.1 by default). */
  host?: string;
  /** Lifetime of access tokens, in seconds. */
  accessTokenTtlS?: number;
  /** Metadata overrides (a token endpoint on another host, to check it is refused). */
  metadata?: Record<string, unknown>;
}

/**
 * An OAuth 2.1 authorization server on loopback: metadata (RFC 8414), dynamic client
 * registration (RFC 7591), an authorization endpoint that approves at once and redirects
 * with a code, a token endpoint that checks PKCE S256 and answers the refresh_token grant.
 */
export interface FakeAuthServer {
  issuer: string;
  port: number;
  seen: SeenRequest[];
  clients: Array<{ client_id: string; redirect_uris: string[] }>;
  /** Every access token issued, valid or not. */
  issued: string[];
  /** Whether the MCP server should accept this bearer now. */
  accepts(token: string): boolean;
  /** Every access token issued so far expires now (the next use gets 401). */
  expireAccessTokens(): void;
  /** The next code is stored with another challenge: its exchange fails as a wrong verifier would. */
  corruptNextChallenge(): void;
  close(): Promise<void>;
}

export async function startFakeAuthServer(
  options: FakeAuthServerOptions = {},
): Promise<FakeAuthServer> {
  const host = options.host ?? '127.0.0.1';
  const ttl = options.accessTokenTtlS ?? 3600;
  const seen: SeenRequest[] = [];
  const clients: FakeAuthServer['clients'] = [];
  const codes = new Map<
    string,
    {
      clientId: string;
      redirectUri: string;
      challenge: string;
      resource: string | null;
    }
  >();
  const access = new Map<string, number>();
  const refresh = new Map<string, string>();
  const issued: string[] = [];
  let corrupt = false;
  let issuer = '';

  const tokens = (clientId: string) => {
    const accessToken = `at-${randomBytes(18).toString('base64url')}`;
    const refreshToken = `rt-${randomBytes(18).toString('base64url')}`;
    access.set(accessToken, Date.now() + ttl * 1000);
    refresh.set(refreshToken, clientId);
    issued.push(accessToken);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttl,
      refresh_token: refreshToken,
      scope: 'notes',
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', issuer);
    seen.push({
      method: req.method ?? '',
      path: url.pathname,
      authorization: req.headers.authorization,
      headers: req.headers,
      body,
    });
    const json = (status: number, value: unknown) =>
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify(value));
    if (url.pathname.startsWith('/.well-known/oauth-authorization-server')) {
      json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        ...options.metadata,
      });
      return;
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const metadata = JSON.parse(body) as { redirect_uris?: string[] };
      const client = {
        client_id: `client-${clients.length + 1}`,
        redirect_uris: metadata.redirect_uris ?? [],
      };
      clients.push(client);
      json(201, {
        ...metadata,
        ...client,
        client_id_issued_at: Math.floor(Date.now() / 1000),
      });
      return;
    }
    if (url.pathname === '/authorize' && req.method === 'GET') {
      const q = url.searchParams;
      const client = clients.find((c) => c.client_id === q.get('client_id'));
      const redirectUri = q.get('redirect_uri') ?? '';
      if (
        !client ||
        !client.redirect_uris.includes(redirectUri) ||
        q.get('response_type') !== 'code' ||
        q.get('code_challenge_method') !== 'S256' ||
        !q.get('code_challenge')
      ) {
        json(400, { error: 'invalid_request' });
        return;
      }
      const code = `code-${randomBytes(12).toString('base64url')}`;
      codes.set(code, {
        clientId: client.client_id,
        redirectUri,
        challenge: corrupt
          ? 'not-the-challenge'
          : (q.get('code_challenge') ?? ''),
        resource: q.get('resource'),
      });
      corrupt = false;
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      if (q.get('state')) back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      if (form.get('grant_type') === 'authorization_code') {
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256')
          .update(verifier)
          .digest('base64url');
        if (
          !grant ||
          grant.clientId !== form.get('client_id') ||
          grant.redirectUri !== form.get('redirect_uri') ||
          grant.challenge !== challenge
        ) {
          json(400, {
            error: 'invalid_grant',
            error_description: 'code or code_verifier does not match',
          });
          return;
        }
        json(200, tokens(grant.clientId));
        return;
      }
      if (form.get('grant_type') === 'refresh_token') {
        const token = form.get('refresh_token') ?? '';
        const clientId = refresh.get(token);
        if (!clientId || clientId !== form.get('client_id')) {
          json(400, { error: 'invalid_grant' });
          return;
        }
        refresh.delete(token);
        json(200, tokens(clientId));
        return;
      }
      json(400, { error: 'unsupported_grant_type' });
      return;
    }
    res.writeHead(404).end();
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((done) => http.listen(0, host, done));
  const port = (http.address() as AddressInfo).port;
  issuer = `http://${host}:${port}`;
  return {
    issuer,
    port,
    seen,
    clients,
    issued,
    accepts: (token) => (access.get(token) ?? 0) > Date.now(),
    expireAccessTokens: () => {
      for (const token of access.keys()) access.set(token, 0);
    },
    corruptNextChallenge: () => {
      corrupt = true;
    },
    close: () => closeServer(http),
  };
}

export interface FakeOAuthMcpServer {
  url: string;
  port: number;
  /** Bearers presented to /mcp. */
  bearers: string[];
  /** The headers of each request to /mcp. */
  headers: IncomingHttpHeaders[];
  calls: string[];
  close(): Promise<void>;
}

/**
 * A Streamable HTTP MCP server (the SDK's, stateless) that wants a bearer from the
 * given authorization server: 401 with `WWW-Authenticate: Bearer resource_metadata=…`
 * otherwise, and its protected-resource metadata (RFC 9728) naming `authorizationServers`.
 */
export async function startOAuthMcpServer(
  authServer: Pick<FakeAuthServer, 'accepts'>,
  authorizationServers: string[],
): Promise<FakeOAuthMcpServer> {
  const bearers: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const calls: string[] = [];
  let base = '';
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          resource: `${base}/mcp`,
          authorization_servers: authorizationServers,
          scopes_supported: ['notes'],
        }),
      );
      return;
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    headers.push(req.headers);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) bearers.push(bearer);
    if (!bearer || !authServer.accepts(bearer)) {
      await readBody(req);
      res
        .writeHead(401, {
          'www-authenticate': `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        })
        .end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const raw = await readBody(req);
    const server = new McpServer({ name: 'fake-oauth', version: '1.0.0' });
    server.registerTool(
      'search',
      {
        description: 'Search the signed-in notes',
        inputSchema: { query: z.string() },
      },
      async ({ query }) => {
        calls.push(query);
        return { content: [{ type: 'text', text: `notes about ${query}` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  const port = (http.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/mcp`,
    port,
    bearers,
    headers,
    calls,
    close: () => closeServer(http),
  };
}

/** A listener that only counts what reaches it: where no request, and no token, may go. */
export async function startTrap(host: string): Promise<{
  origin: string;
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}> {
  const seen: SeenRequest[] = [];
  const http = createServer((req, res) => {
    void readBody(req).then((body) => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        headers: req.headers,
        body,
      });
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((done) => http.listen(0, host, done));
  const port = (http.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${port}`,
    port,
    seen,
    close: () => closeServer(http),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function closeServer(http: Server): Promise<void> {
  http.closeAllConnections();
  await new Promise<void>((done) => http.close(() => done()));
}
