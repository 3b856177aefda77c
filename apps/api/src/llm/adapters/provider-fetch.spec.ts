import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createProviderFetch, type ProviderFetch } from './provider-fetch';

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback server answering each path with its route; it records what it received. */
let server: Server;
let base: string;
const routes = new Map<string, Route>();
const received: Array<{
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: string;
  remotePort?: number;
}> = [];
const closed: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => (body += piece));
    req.on('end', () => {
      received.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body,
        remotePort: req.socket.remotePort,
      });
      res.on('close', () => {
        if (!res.writableFinished) closed.push(req.url ?? '');
      });
      const route = routes.get(req.url ?? '');
      if (route) route(req, res, body);
      else {
        res.writeHead(404);
        res.end('no route');
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

beforeEach(() => {
  routes.clear();
  received.length = 0;
  closed.length = 0;
});

const providerFetch = createProviderFetch({ silenceTimeoutMs: 0 });

/** Both fetches, so that each behaviour is checked to be Node's own. */
const FETCHES: Array<[string, ProviderFetch]> = [
  ['the provider fetch', providerFetch],
  ["Node's fetch", (input, init) => fetch(input, init)],
];

function sse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  if (!response.body) throw new Error('the response has no body');
  return response.body.getReader();
}

async function readAll(response: Response): Promise<string> {
  const reader = readerOf(response);
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/** What a failure looks like from outside: its name, message and (when any) its cause's code. */
async function outcome(
  work: Promise<unknown>,
): Promise<{ name: string; message: string }> {
  try {
    await work;
  } catch (error) {
    const { name, message } = error as Error;
    return { name, message };
  }
  throw new Error('expected a failure');
}

function causeCode(error: unknown): string | undefined {
  return ((error as { cause?: { code?: string } }).cause ?? {}).code;
}

describe('createProviderFetch', () => {
  it.each(FETCHES)(
    '%s: sends the method, headers and body, and streams the reply as it comes',
    async (_, fetchFn) => {
      let finish!: () => void;
      routes.set('/v1/chat', (req, res) => {
        sse(res);
        res.write('data: one\n\n');
        finish = () => res.end('data: two\n\n');
      });
      const response = await fetchFn(`${base}/v1/chat`, {
        method: 'POST',
        headers: new Headers({
          'content-type': 'application/json',
          authorization: 'Bearer sk-x',
        }),
        body: '{"q":"héllo"}',
      });
      expect(response).toMatchObject({ status: 200, ok: true });
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const reader = readerOf(response);
      // The first piece is readable while the server has not finished.
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
      finish();
      const second = await reader.read();
      expect(new TextDecoder().decode(second.value)).toBe('data: two\n\n');
      expect((await reader.read()).done).toBe(true);
      expect(received[0]).toMatchObject({
        method: 'POST',
        body: '{"q":"héllo"}',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-x',
          'content-length': String(Buffer.byteLength('{"q":"héllo"}')),
        },
      });
    },
  );

  it('keeps the connection for the next request', async () => {
    routes.set('/a', (_req, res) => res.end('a'));
    expect(await (await providerFetch(`${base}/a`)).text()).toBe('a');
    expect(await (await providerFetch(`${base}/a`)).text()).toBe('a');
    expect(received).toHaveLength(2);
    expect(received[1].remotePort).toBe(received[0].remotePort);
  });

  it.each(FETCHES)(
    '%s: an error status comes back as a response with its body',
    async (_, fetchFn) => {
      routes.set('/bad', (_req, res) => {
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': '2',
        });
        res.end('{"error":{"message":"slow down"}}');
      });
      const response = await fetchFn(`${base}/bad`, { method: 'POST' });
      expect(response).toMatchObject({ status: 429, ok: false });
      expect(response.headers.get('retry-after')).toBe('2');
      expect(await response.json()).toEqual({
        error: { message: 'slow down' },
      });
    },
  );

  it.each(FETCHES)(
    '%s: a response reads as fetch’s does: once, as text, bytes or a clone',
    async (_, fetchFn) => {
      routes.set('/json', (_req, res) => {
        res.writeHead(200, 'Fine', { 'content-type': 'application/json' });
        res.end('{"a":1}');
      });
      const first = await fetchFn(`${base}/json`);
      expect(first).toMatchObject({
        status: 200,
        statusText: 'Fine',
        url: `${base}/json`,
        redirected: false,
        bodyUsed: false,
      });
      const copy = first.clone();
      expect(await first.text()).toBe('{"a":1}');
      expect(first.bodyUsed).toBe(true);
      await expect(first.text()).rejects.toMatchObject({ name: 'TypeError' });
      expect(new TextDecoder().decode(await copy.arrayBuffer())).toBe(
        '{"a":1}',
      );

      const streamed = await fetchFn(`${base}/json`);
      expect(await readAll(streamed)).toBe('{"a":1}');
      await expect(streamed.json()).rejects.toMatchObject({
        name: 'TypeError',
      });
    },
  );

  it.each(FETCHES)('%s: a 204 has no body', async (_, fetchFn) => {
    routes.set('/empty', (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await fetchFn(`${base}/empty`);
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it.each(FETCHES)(
    '%s: a refused connection is "fetch failed" with the reason as cause',
    async (_, fetchFn) => {
      const probe = createServer();
      await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
      const { port } = probe.address() as AddressInfo;
      await new Promise((done) => probe.close(done));
      const error = await fetchFn(`http://127.0.0.1:${port}/`).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        name: 'TypeError',
        message: 'fetch failed',
      });
      expect(causeCode(error)).toBe('ECONNREFUSED');
    },
  );

  it.each(FETCHES)(
    '%s: a connection cut mid-body errors the body with "terminated"',
    async (_, fetchFn) => {
      routes.set('/cut', (req, res) => {
        sse(res);
        res.write('data: one\n\n', () =>
          setTimeout(() => req.socket.destroy(), 20),
        );
      });
      const response = await fetchFn(`${base}/cut`);
      expect(await outcome(readAll(response))).toEqual({
        name: 'TypeError',
        message: 'terminated',
      });
    },
  );

  it.each(FETCHES)(
    '%s: an abort before the reply rejects with the signal reason and closes the request',
    async (_, fetchFn) => {
      routes.set('/slow', () => undefined);
      const controller = new AbortController();
      const pending = fetchFn(`${base}/slow`, { signal: controller.signal });
      await waitFor(() => received.length === 1);
      controller.abort();
      expect(await outcome(pending)).toMatchObject({ name: 'AbortError' });
      await waitFor(() => closed.includes('/slow'));
    },
  );

  it.each(FETCHES)(
    '%s: an abort mid-body errors the body with the signal reason',
    async (_, fetchFn) => {
      routes.set('/stream', (_req, res) => {
        sse(res);
        res.write('data: one\n\n');
      });
      const controller = new AbortController();
      const response = await fetchFn(`${base}/stream`, {
        signal: controller.signal,
      });
      const reader = readerOf(response);
      await reader.read();
      controller.abort();
      expect(await outcome(reader.read())).toMatchObject({
        name: 'AbortError',
      });
      await waitFor(() => closed.includes('/stream'));
    },
  );

  it.each(FETCHES)(
    '%s: an aborted signal sends nothing',
    async (_, fetchFn) => {
      const controller = new AbortController();
      controller.abort();
      expect(
        await outcome(fetchFn(`${base}/a`, { signal: controller.signal })),
      ).toMatchObject({ name: 'AbortError' });
      await delay(50);
      expect(received).toHaveLength(0);
    },
  );

  it.each(FETCHES)(
    '%s: a reader that stops early closes the connection',
    async (_, fetchFn) => {
      routes.set('/stream', (_req, res) => {
        sse(res);
        res.write('data: one\n\n');
      });
      const response = await fetchFn(`${base}/stream`);
      const reader = readerOf(response);
      await reader.read();
      await reader.cancel();
      await waitFor(() => closed.includes('/stream'));
    },
  );

  it.each(FETCHES)('%s: a gzip body is decoded', async (_, fetchFn) => {
    routes.set('/zip', (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      res.end(gzipSync('{"ok":true}'));
    });
    expect(await (await fetchFn(`${base}/zip`)).json()).toEqual({ ok: true });
  });

  it.each(FETCHES)(
    '%s: a 307 is followed with the same method and body',
    async (_, fetchFn) => {
      routes.set('/old', (_req, res) => {
        res.writeHead(307, { location: '/new' });
        res.end();
      });
      routes.set('/new', (_req, res, body) => res.end(`got ${body}`));
      const response = await fetchFn(`${base}/old`, {
        method: 'POST',
        body: 'payload',
      });
      expect(await response.text()).toBe('got payload');
      expect(response).toMatchObject({ redirected: true });
      expect(received.map((r) => [r.method, r.url, r.body])).toEqual([
        ['POST', '/old', 'payload'],
        ['POST', '/new', 'payload'],
      ]);
    },
  );

  it.each(FETCHES)(
    '%s: a 303 is followed as a GET without the body',
    async (_, fetchFn) => {
      routes.set('/made', (_req, res) => {
        res.writeHead(303, { location: '/result' });
        res.end();
      });
      routes.set('/result', (req, res, body) =>
        res.end(`${req.method} ${body} ${req.headers['content-type'] ?? '-'}`),
      );
      const response = await fetchFn(`${base}/made`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(await response.text()).toBe('GET  -');
    },
  );

  it.each(FETCHES)(
    '%s: a redirect to another origin drops the authorization',
    async (_, fetchFn) => {
      const other = createServer((req, res) =>
        res.end(
          `${req.headers.authorization ?? 'none'} ${req.headers['x-goog-api-key']}`,
        ),
      );
      await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
      const { port } = other.address() as AddressInfo;
      routes.set('/moved', (_req, res) => {
        res.writeHead(308, { location: `http://127.0.0.1:${port}/here` });
        res.end();
      });
      try {
        const response = await fetchFn(`${base}/moved`, {
          method: 'POST',
          headers: { authorization: 'Bearer sk-x', 'x-goog-api-key': 'k' },
          body: 'payload',
        });
        expect(await response.text()).toBe('none k');
      } finally {
        other.closeAllConnections();
        await new Promise((done) => other.close(done));
      }
    },
  );

  it('gives up on a silent server with undici’s timeout errors', async () => {
    const impatient = createProviderFetch({ silenceTimeoutMs: 150 });
    routes.set('/silent', () => undefined);
    const error = await impatient(`${base}/silent`).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(causeCode(error)).toBe('UND_ERR_HEADERS_TIMEOUT');

    routes.set('/stalls', (_req, res) => {
      sse(res);
      res.write('data: one\n\n');
    });
    const response = await impatient(`${base}/stalls`);
    const failure = await readAll(response).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TypeError', message: 'terminated' });
    expect(causeCode(failure)).toBe('UND_ERR_BODY_TIMEOUT');
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  const until = Date.now() + 2_000;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await delay(10);
  }
}
