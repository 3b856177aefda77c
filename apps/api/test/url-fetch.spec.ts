import * as http from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { Socket } from 'node:net';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type TestAgent from 'supertest/lib/agent';
import { parseToolArguments } from '../src/ai-tools/tool-argument-schema';
import { FileDirs } from '../src/files/file-dirs';
import { SettingsService } from '../src/settings/settings.service';
import { UrlFetchTool } from '../src/url-fetch/url-fetch.tool';
import { HostResolver } from '../src/url-fetch/url-fetcher';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { NAS_TEST_CERT, NAS_TEST_KEY } from './support/self-signed-tls';
import { createTestApp, type TestApp } from './support/test-app';

/** What the loopback server received. */
interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  port: number;
}

type Handler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: string,
) => void;

/** A scripted loopback HTTP server: `routes[path]` answers, every request is recorded. */
async function startServer(routes: Record<string, Handler>) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        port: (server.address() as AddressInfo).port,
      });
      const route = routes[path];
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
        return;
      }
      route(req, res, body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const PROFILE_VALUE = 'Bearer ghp-secret-profile-value-7788';

describe('url_fetch', () => {
  let t: TestApp;
  let owner: TestAgent;
  let main: Awaited<ReturnType<typeof startServer>>;
  let other: Awaited<ReturnType<typeof startServer>>;
  let resolverAnswers: Record<string, string[]>;
  let lookups: string[];
  /** Every outgoing socket a fetch opened (`host:port` it was asked to reach), from Socket#connect. */
  let connects: string[];
  let connectSpy: jest.SpyInstance;

  const page =
    (html: string): Handler =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    };

  beforeAll(async () => {
    other = await startServer({
      '/echo': (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ authorization: req.headers.authorization ?? null }),
        );
      },
    });
    main = await startServer({
      '/hello.txt': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('hello from loopback');
      },
      '/page.html': page(
        '<html><head><title>The &amp; Page</title><style>p{color:red}</style><script>alert(1)</script></head>' +
          '<body><h1>Welcome</h1><p>Read the <a href="https://example.com/docs">docs</a> now.</p>' +
          '<ul><li>first</li><li>second</li></ul></body></html>',
      ),
      '/big.txt': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(4000));
      },
      '/gzip.json': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        });
        res.end(gzipSync(JSON.stringify({ zipped: true })));
      },
      '/image.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
      },
      '/slow': (_req, res) => {
        const timer = setTimeout(() => res.end('late'), 5_000);
        res.on('close', () => clearTimeout(timer));
      },
      '/stall': (_req, res) => {
        // Headers and a first chunk, then nothing: the body never ends.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      },
      '/stall.gz': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'text/plain',
          'content-encoding': 'gzip',
        });
        res.write(gzipSync('partial').subarray(0, 10));
      },
      '/to-private': (_req, res) => {
        res.writeHead(302, { location: 'http://10.0.0.1/admin' });
        res.end();
      },
      '/to-metadata-name': (_req, res) => {
        res.writeHead(301, { location: 'http://metadata.test/latest/' });
        res.end();
      },
      '/to-file': (_req, res) => {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
      },
      '/to-hello': (_req, res) => {
        res.writeHead(302, { location: '/hello.txt' });
        res.end();
      },
      '/loop': (req, res) => {
        const n = Number(
          new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? 0,
        );
        res.writeHead(302, { location: `/loop?n=${n + 1}` });
        res.end();
      },
      '/post-redirect': (_req, res) => {
        res.writeHead(303, { location: '/hello.txt' });
        res.end();
      },
      '/api/echo': (req, res, body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            authorization: req.headers.authorization ?? null,
            contentType: req.headers['content-type'] ?? null,
            body,
          }),
        );
      },
      '/api/away': (_req, res) => {
        res.writeHead(307, { location: `${other.url}/echo` });
        res.end();
      },
      '/sized.bin': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': 3000,
        });
        res.end(Buffer.alloc(3000, 7));
      },
      '/file.bin': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(3000, 7));
      },
      '/missing.bin': (_req, res) => {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('gone');
      },
    });
    t = await createTestApp();
    owner = await t.owner();
    const resolver = t.app.get(HostResolver);
    jest.spyOn(resolver, 'lookup').mockImplementation(async (host) => {
      lookups.push(host);
      const answer = resolverAnswers[host];
      if (!answer)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), {
          code: 'ENOTFOUND',
        });
      return answer;
    });
  });

  beforeEach(() => {
    lookups = [];
    resolverAnswers = {
      'nas.test': ['127.0.0.1'],
      'internal.test': ['10.0.0.1'],
      'mixed.test': ['93.184.215.14', '192.168.1.20'],
      'metadata.test': ['169.254.169.254'],
      'mapped.test': ['::ffff:127.0.0.1'],
    };
    main.seen.length = 0;
    other.seen.length = 0;
    connects = [];
    const connect = Socket.prototype.connect;
    connectSpy = jest
      .spyOn(Socket.prototype, 'connect')
      .mockImplementation(function (this: Socket, ...args: unknown[]) {
        // net.createConnection hands over its normalised [options, callback] pair.
        const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as {
          host?: string;
          port?: number;
          lookup?: unknown;
        };
        // The fetcher's sockets carry its pinned lookup; the database driver's do not.
        if (typeof options === 'object' && options?.lookup)
          connects.push(`${options.host}:${options.port}`);
        return (connect as (...a: unknown[]) => Socket).apply(this, args);
      });
  });
  afterEach(() => connectSpy.mockRestore());

  afterAll(async () => {
    await t.close();
    await main.close();
    await other.close();
  });

  const allow = (...hosts: string[]) =>
    owner
      .patch('/api/settings')
      .send({ urlFetchAllowHosts: hosts })
      .expect(200);

  /** The tool as the registry runs it: arguments checked by its zod schema, the settings of the database. */
  async function fetchTool(
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const tool = t.app.get(UrlFetchTool);
    const parsed = parseToolArguments(tool.schema, args);
    if (!parsed.ok) return { error: parsed.error };
    const settings = await t.app.get(SettingsService).get();
    return JSON.parse(
      await tool.execute(parsed.args, {
        source: 'chat',
        settings,
        chatId: null,
        messageId: null,
        signal: new AbortController().signal,
      }),
    );
  }

  describe('the address guard, before any connection', () => {
    beforeAll(() => allow());

    it('refuses a name whose DNS answer is private, without connecting', async () => {
      expect(await fetchTool({ url: 'http://internal.test/secret' })).toEqual({
        error:
          'Refused: internal.test resolves to 10.0.0.1, a private address (only public addresses can be fetched; the owner can allow internal.test:80 on the Tools page)',
      });
      expect(lookups).toEqual(['internal.test']);
      expect(connects).toEqual([]);
    });

    it('refuses when any one of the addresses is private, and metadata even by name', async () => {
      expect(
        (await fetchTool({ url: 'https://mixed.test/' }))['error'],
      ).toMatch(
        /^Refused: mixed\.test resolves to 192\.168\.1\.20, a private address/,
      );
      expect(await fetchTool({ url: 'http://metadata.test/latest/' })).toEqual({
        error:
          'Refused: metadata.test resolves to 169.254.169.254, a cloud metadata address (never allowed)',
      });
      expect(
        (await fetchTool({ url: 'http://mapped.test/' }))['error'],
      ).toMatch(
        /IPv4-mapped IPv6 address of 127\.0\.0\.1 \(a loopback address\)/,
      );
      expect(connects).toEqual([]);
    });

    it.each([
      'http://127.0.0.1:{port}/hello.txt',
      'http://2130706433:{port}/hello.txt',
      'http://0177.0.0.1:{port}/hello.txt',
      'http://0x7f.1:{port}/hello.txt',
      'http://127.1:{port}/hello.txt',
      'http://[::ffff:127.0.0.1]:{port}/hello.txt',
      'http://[::1]:{port}/hello.txt',
      'http://localhost:{port}/hello.txt',
      'http://LOCALHOST.:{port}/hello.txt',
      'http://app.localhost:{port}/hello.txt',
      'http://0.0.0.0:{port}/hello.txt',
      'http://[::]:{port}/hello.txt',
    ])('refuses %s without DNS or a connection', async (template) => {
      const url = template.replace('{port}', String(main.port));
      expect((await fetchTool({ url }))['error']).toMatch(/^Refused: /);
      expect(lookups).toEqual([]);
      expect(connects).toEqual([]);
      expect(main.seen).toEqual([]);
    });

    it('refuses other schemes and URLs with credentials', async () => {
      expect(await fetchTool({ url: 'file:///etc/passwd' })).toEqual({
        error: 'Only http and https URLs can be fetched (got file)',
      });
      expect(await fetchTool({ url: 'gopher://example.com/' })).toEqual({
        error: 'Only http and https URLs can be fetched (got gopher)',
      });
      expect(
        (await fetchTool({ url: 'http://me:pw@example.com/' }))['error'],
      ).toMatch(/credentials/);
      expect(connects).toEqual([]);
    });
  });

  describe('an allowed loopback server (urlFetchAllowHosts)', () => {
    beforeAll(async () => {
      await allow(`127.0.0.1:${main.port}`, `nas.test:${main.port}`);
    });

    it('is reached only through its exact host:port, in any spelling of the address', async () => {
      for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1']) {
        expect(
          await fetchTool({ url: `http://${host}:${main.port}/hello.txt` }),
        ).toEqual({
          url: `http://127.0.0.1:${main.port}/hello.txt`,
          status: 200,
          content_type: 'text/plain; charset=utf-8',
          bytes: 19,
          truncated: false,
          body: 'hello from loopback',
        });
      }
      // Another port of the same address is not on the list.
      expect(
        (await fetchTool({ url: `http://127.0.0.1:${other.port}/echo` }))[
          'error'
        ],
      ).toMatch(/^Refused: 127\.0\.0\.1 is a loopback address/);
      expect(other.seen).toEqual([]);
    });

    it('connects a listed name to the address it checked (one lookup, Host kept)', async () => {
      const result = await fetchTool({
        url: `http://NAS.test.:${main.port}/hello.txt`,
      });
      expect(result['body']).toBe('hello from loopback');
      expect(lookups).toEqual(['nas.test']);
      expect(main.seen[0].headers.host).toBe(`nas.test:${main.port}`);
    });

    it('turns HTML into readable text with its title; scripts and styles dropped', async () => {
      const result = await fetchTool({ url: `${main.url}/page.html` });
      expect(result).toMatchObject({
        status: 200,
        content_type: 'text/html; charset=utf-8',
        truncated: false,
        title: 'The & Page',
      });
      const text = result['text'] as string;
      expect(text).toContain('Welcome');
      expect(text).toContain('Read the docs [https://example.com/docs] now.');
      expect(text).toMatch(/\* first\n \* second/);
      expect(text).not.toMatch(/alert|color:red|<p>/);
    });

    it('cuts the body at max_bytes, decodes gzip, and does not show binary', async () => {
      expect(
        await fetchTool({ url: `${main.url}/big.txt`, max_bytes: 1000 }),
      ).toMatchObject({ bytes: 1000, truncated: true, body: 'x'.repeat(1000) });
      expect(await fetchTool({ url: `${main.url}/big.txt` })).toMatchObject({
        bytes: 4000,
        truncated: false,
      });
      expect(await fetchTool({ url: `${main.url}/gzip.json` })).toMatchObject({
        body: '{"zipped":true}',
      });
      expect(main.seen.at(-1)?.headers['accept-encoding']).toBe(
        'gzip, deflate, br',
      );
      expect(await fetchTool({ url: `${main.url}/image.png` })).toEqual({
        url: `${main.url}/image.png`,
        status: 200,
        content_type: 'image/png',
        bytes: 8,
        truncated: false,
        note: 'Binary content is not shown: use download_path to save it.',
      });
      expect(
        await fetchTool({ url: `${main.url}/big.txt`, max_bytes: 600_000 }),
      ).toEqual({
        error:
          'max_bytes above 524288 (512 KiB) needs download_path: larger bodies are saved to a file, not returned',
      });
    });

    it('gives up at timeout_seconds with a clear error', async () => {
      const started = Date.now();
      expect(
        await fetchTool({ url: `${main.url}/slow`, timeout_seconds: 1 }),
      ).toEqual({
        error: 'The request timed out after 1 s (timeout_seconds)',
      });
      expect(Date.now() - started).toBeLessThan(3_000);
      // A body that stops half-way, plain or compressed, or saved to a file.
      for (const args of [
        { url: `${main.url}/stall` },
        { url: `${main.url}/stall.gz` },
        { url: `${main.url}/stall`, download_path: 'stalled.txt' },
      ])
        expect(await fetchTool({ ...args, timeout_seconds: 1 })).toEqual({
          error: 'The request timed out after 1 s (timeout_seconds)',
        });
      expect(
        readdirSync(t.app.get(FileDirs).cacheDir).filter((f) =>
          f.startsWith('stalled'),
        ),
      ).toEqual([]);
      expect(
        await fetchTool({ url: `${main.url}/slow`, timeout_seconds: 500 }),
      ).toEqual({ error: "Argument 'timeout_seconds' must be at most 120" });
    });

    it('speaks TLS to the host name: SNI sent, an untrusted certificate refused', async () => {
      const names: string[] = [];
      const tls = createTlsServer(
        {
          cert: NAS_TEST_CERT,
          key: NAS_TEST_KEY,
          SNICallback: (name, done) => {
            names.push(name);
            done(null);
          },
        },
        (_req, res) => res.end('should not be read'),
      );
      await new Promise<void>((done) => tls.listen(0, '127.0.0.1', done));
      const port = (tls.address() as AddressInfo).port;
      try {
        await allow(`nas.test:${port}`);
        expect(await fetchTool({ url: `https://nas.test:${port}/` })).toEqual({
          error:
            'The TLS certificate of nas.test was not accepted (DEPTH_ZERO_SELF_SIGNED_CERT)',
        });
        expect(names).toEqual(['nas.test']);
        expect(connects).toEqual([`nas.test:${port}`]);
        expect(lookups).toEqual(['nas.test']);
      } finally {
        tls.closeAllConnections();
        await new Promise<void>((done) => tls.close(() => done()));
        await allow(`127.0.0.1:${main.port}`, `nas.test:${main.port}`);
      }
    });

    describe('redirects', () => {
      it('decides a redirect target before connecting to it', async () => {
        expect(await fetchTool({ url: `${main.url}/to-private` })).toEqual({
          error:
            'Refused: 10.0.0.1 is a private address (only public addresses can be fetched; the owner can allow 10.0.0.1:80 on the Tools page)',
        });
        // One connection: the loopback server's. None to 10.0.0.1.
        expect(connects).toEqual([`127.0.0.1:${main.port}`]);
        expect(main.seen.map((s) => s.path)).toEqual(['/to-private']);

        expect(
          (await fetchTool({ url: `${main.url}/to-metadata-name` }))['error'],
        ).toBe(
          'Refused: metadata.test resolves to 169.254.169.254, a cloud metadata address (never allowed)',
        );
        expect((await fetchTool({ url: `${main.url}/to-file` }))['error']).toBe(
          'Redirect to file:///etc/passwd refused: Only http and https URLs can be fetched (got file)',
        );
        expect(connects).toEqual([
          `127.0.0.1:${main.port}`,
          `127.0.0.1:${main.port}`,
          `127.0.0.1:${main.port}`,
        ]);
      });

      it('follows at most 3, each checked; a POST becomes a GET on 303', async () => {
        expect(await fetchTool({ url: `${main.url}/to-hello` })).toMatchObject({
          url: `${main.url}/hello.txt`,
          redirects: 1,
          body: 'hello from loopback',
        });
        main.seen.length = 0;
        expect(await fetchTool({ url: `${main.url}/loop` })).toEqual({
          error:
            'Too many redirects: more than 3 (the last one pointed to /loop?n=4)',
        });
        expect(main.seen.map((s) => s.path)).toEqual([
          '/loop',
          '/loop?n=1',
          '/loop?n=2',
          '/loop?n=3',
        ]);
        main.seen.length = 0;
        await fetchTool({
          url: `${main.url}/post-redirect`,
          method: 'POST',
          body: { a: 1 },
        });
        expect(main.seen.map((s) => [s.method, s.path, s.body])).toEqual([
          ['POST', '/post-redirect', '{"a":1}'],
          ['GET', '/hello.txt', ''],
        ]);
      });
    });

    describe('request headers', () => {
      it.each([
        ['Authorization', 'Bearer x'],
        ['cookie', 'a=b'],
        ['Host', 'evil.example'],
        ['Proxy-Authorization', 'Basic x'],
        ['X-Forwarded-For', '127.0.0.1'],
        ['X-Api-Key', 'k'],
        ['X-Auth-Token', 't'],
        ['Client-Secret', 's'],
      ])('refuses %s, pointing at auth profiles', async (name, value) => {
        expect(
          await fetchTool({
            url: `${main.url}/hello.txt`,
            headers: { [name]: value },
          }),
        ).toEqual({
          error: `Header '${name}' is refused: credentials are never set by the model; use auth_profile with a profile the owner set up`,
        });
        expect(connects).toEqual([]);
      });

      it('refuses headers off the allow-list and sends the allowed ones', async () => {
        expect(
          await fetchTool({
            url: `${main.url}/hello.txt`,
            headers: { 'X-Custom': '1' },
          }),
        ).toEqual({
          error:
            "Header 'X-Custom' is not allowed; allowed headers: Accept, Content-Type, User-Agent, If-None-Match, If-Modified-Since, Range",
        });
        await fetchTool({
          url: `${main.url}/api/echo`,
          method: 'PUT',
          headers: { accept: 'application/json', Range: 'bytes=0-10' },
          body: 'plain words',
        });
        expect(main.seen[0]).toMatchObject({
          method: 'PUT',
          body: 'plain words',
          headers: {
            accept: 'application/json',
            range: 'bytes=0-10',
            'content-type': 'text/plain; charset=utf-8',
          },
        });
        expect(
          await fetchTool({ url: `${main.url}/hello.txt`, body: 'x' }),
        ).toEqual({
          error: 'body is only sent with POST, PUT or PATCH (method is GET)',
        });
      });
    });

    describe('auth profiles', () => {
      beforeAll(async () => {
        await owner
          .patch('/api/settings')
          .send({
            urlFetchAllowHosts: [
              `127.0.0.1:${main.port}`,
              `127.0.0.1:${other.port}`,
            ],
            authProfiles: [
              {
                id: 'home',
                urlPrefix: `${main.url}/api/`,
                header: 'Authorization',
                value: PROFILE_VALUE,
              },
            ],
          })
          .expect(200);
      });

      it('are masked on every read', async () => {
        const view = (await owner.get('/api/settings').expect(200)).body;
        expect(view.authProfiles).toEqual([
          {
            id: 'home',
            urlPrefix: `${main.url}/api/`,
            header: 'Authorization',
            value: '••••7788',
          },
        ]);
        const docs = (
          await owner
            .get('/api/data/collections/settings/documents')
            .expect(200)
        ).body;
        expect(JSON.stringify(docs)).not.toContain(PROFILE_VALUE);
        expect(JSON.stringify(docs)).toContain('••••7788');
      });

      it('inject the value only under the prefix and never show it to the model', async () => {
        const result = await fetchTool({
          url: `${main.url}/api/echo`,
          auth_profile: 'home',
        });
        expect(main.seen[0].headers.authorization).toBe(PROFILE_VALUE);
        // The server echoed it: the model sees it masked.
        expect(JSON.stringify(result)).not.toContain(PROFILE_VALUE);
        expect(JSON.parse(result['body'] as string)).toMatchObject({
          authorization: '[redacted secret]',
        });

        expect(
          await fetchTool({
            url: `${main.url}/hello.txt`,
            auth_profile: 'home',
          }),
        ).toEqual({
          error: `auth_profile 'home' only applies to URLs under ${main.url}/api/`,
        });
        expect(
          await fetchTool({
            url: `${main.url}/api/echo`,
            auth_profile: 'work',
          }),
        ).toEqual({
          error: `Unknown auth_profile 'work'; the owner has set up: home (${main.url}/api/)`,
        });
        // Without auth_profile, nothing is added.
        await fetchTool({ url: `${main.url}/api/echo` });
        expect(main.seen.map((s) => s.headers.authorization)).toEqual([
          PROFILE_VALUE,
          undefined,
        ]);
      });

      it('are not sent on to another origin by a redirect', async () => {
        const result = await fetchTool({
          url: `${main.url}/api/away`,
          auth_profile: 'home',
        });
        expect(main.seen[0].headers.authorization).toBe(PROFILE_VALUE);
        expect(other.seen).toHaveLength(1);
        expect(other.seen[0].headers.authorization).toBeUndefined();
        expect(JSON.parse(result['body'] as string)).toEqual({
          authorization: null,
        });
      });

      it('reach the model only as ids in a real chat turn', async () => {
        const fake = await startFakeProviders();
        try {
          await useModel(t, 'gpt-4.1-mini');
          const client = await chatClient(t);
          const chat = (await owner.post('/api/chats').send({}).expect(201))
            .body;
          fake.openai.enqueue(
            {
              toolCalls: [
                {
                  id: 'call_f',
                  name: 'url_fetch',
                  arguments: {
                    url: `${main.url}/api/echo`,
                    auth_profile: 'home',
                  },
                },
              ],
            },
            { text: ['Fetched.'] },
          );
          const events = await client.send(chat.id, 'fetch it');
          const [result] = eventsNamed(events, 'tool_result') as {
            name: string;
            result: string;
          }[];
          expect(result.name).toBe('url_fetch');
          expect(result.result).toContain('[redacted secret]');
          const sent = JSON.stringify(fake.openai.requests);
          expect(sent).not.toContain(PROFILE_VALUE);
          expect(sent).toContain('url_fetch');
        } finally {
          await fake.close();
          fake.restoreEnv();
        }
      });
    });

    describe('download_path', () => {
      const cacheDir = () => t.app.get(FileDirs).cacheDir;

      it('saves into the cache dir and returns only metadata', async () => {
        expect(
          await fetchTool({
            url: `${main.url}/file.bin`,
            download_path: 'downloads/file.bin',
          }),
        ).toEqual({
          path: 'file_cache_dir/downloads/file.bin',
          bytes: 3000,
          content_type: 'application/octet-stream',
          status: 200,
        });
        expect(readFileSync(join(cacheDir(), 'downloads/file.bin'))).toEqual(
          Buffer.alloc(3000, 7),
        );
        expect(
          await fetchTool({
            url: `${main.url}/hello.txt`,
            download_path: 'file_cache_dir/hello.txt',
          }),
        ).toMatchObject({ path: 'file_cache_dir/hello.txt', bytes: 19 });
      });

      it.each([
        ['../../outside.bin', /leaves file_cache_dir/],
        ['file_cache_dir/../../outside.bin', /leaves file_cache_dir/],
        ['/etc/outside.bin', /outside file_cache_dir and file_state_dir/],
        ['file_state_dir/TODO.md', /download_path must be in file_cache_dir/],
      ])('refuses %s and sends nothing', async (path, error) => {
        expect(
          (
            await fetchTool({
              url: `${main.url}/file.bin`,
              download_path: path,
            })
          )['error'],
        ).toMatch(error);
        expect(main.seen).toEqual([]);
        expect(existsSync(join(cacheDir(), '..', 'outside.bin'))).toBe(false);
      });

      it('saves nothing when the body is over max_bytes or the status is an error', async () => {
        expect(
          await fetchTool({
            url: `${main.url}/file.bin`,
            download_path: 'cut.bin',
            max_bytes: 1000,
          }),
        ).toEqual({
          error:
            'The response is larger than max_bytes (1000); nothing was saved',
        });
        // A declared length over the cap is refused before reading.
        expect(
          await fetchTool({
            url: `${main.url}/sized.bin`,
            download_path: 'cut-sized.bin',
            max_bytes: 1000,
          }),
        ).toEqual({
          error:
            'The response is 3000 bytes, more than max_bytes (1000); nothing was saved',
        });
        expect(
          await fetchTool({
            url: `${main.url}/missing.bin`,
            download_path: 'missing.bin',
          }),
        ).toEqual({
          error:
            'The server answered HTTP 404; nothing was saved to file_cache_dir/missing.bin',
        });
        expect(
          readdirSync(cacheDir()).filter(
            (f) => f.startsWith('cut') || f.startsWith('missing'),
          ),
        ).toEqual([]);
      });
    });
  });

  describe('settings', () => {
    it('rejects a bad allow-list entry or profile with 400 and writes nothing', async () => {
      const before = (await owner.get('/api/settings').expect(200)).body;
      const bad = await owner
        .patch('/api/settings')
        .send({ urlFetchAllowHosts: ['nas.local', 'http://x:80'] })
        .expect(400);
      expect(bad.body.message).toEqual([
        'urlFetchAllowHosts[0] must be host:port, like nas.local:8123 or [fd00::7]:80 (got "nas.local")',
        'urlFetchAllowHosts[1] must be host:port, like nas.local:8123 or [fd00::7]:80 (got "http://x:80")',
      ]);
      const profile = await owner
        .patch('/api/settings')
        .send({
          authProfiles: [
            {
              id: 'new',
              urlPrefix: 'https://api.example.com/',
              header: 'X-Key',
            },
            {
              id: 'bad',
              urlPrefix: 'ftp://example.com/',
              header: 'Authorization',
              value: 'v',
            },
            {
              id: 'hdr',
              urlPrefix: 'https://example.com/',
              header: 'Host',
              value: 'v',
            },
          ],
        })
        .expect(400);
      expect(profile.body.message).toEqual([
        'authProfiles[0].value is required for a new profile (a masked value keeps nothing)',
        'authProfiles[1].urlPrefix must be an http(s) URL without credentials, like https://api.example.com/ (got "ftp://example.com/")',
        'authProfiles[2].header must be a header name such as Authorization or X-Api-Key (got "Host")',
      ]);
      expect((await owner.get('/api/settings').expect(200)).body).toEqual(
        before,
      );
    });

    it('keeps a masked value for the same prefix and header and asks for it again when either changes', async () => {
      const [home] = (await owner.get('/api/settings').expect(200)).body
        .authProfiles;
      // The same header in another case is the same header.
      await owner
        .patch('/api/settings')
        .send({
          authProfiles: [{ ...home, header: home.header.toLowerCase() }],
        })
        .expect(200);
      const renamed = await owner
        .patch('/api/settings')
        .send({ authProfiles: [{ ...home, header: 'X-Token' }] })
        .expect(400);
      expect(renamed.body.message).toEqual([
        `authProfiles[0].value must be sent again because the header changed (from ${home.header.toLowerCase()} to X-Token): a stored value is only sent in the header it was entered for`,
      ]);
      expect((await t.app.get(SettingsService).get()).authProfiles).toEqual([
        { ...home, header: home.header.toLowerCase(), value: PROFILE_VALUE },
      ]);
      await owner
        .patch('/api/settings')
        .send({
          authProfiles: [{ ...home, header: 'X-Token', value: 'new-value-1' }],
        })
        .expect(200);
      expect((await t.app.get(SettingsService).get()).authProfiles).toEqual([
        { ...home, header: 'X-Token', value: 'new-value-1' },
      ]);
      const moved = await owner
        .patch('/api/settings')
        .send({
          authProfiles: [{ ...home, urlPrefix: 'https://collector.example/' }],
        })
        .expect(400);
      expect(moved.body.message).toEqual([
        `authProfiles[0].value must be sent again because urlPrefix changed (from ${home.urlPrefix} to https://collector.example/)`,
      ]);
    });
  });
});
