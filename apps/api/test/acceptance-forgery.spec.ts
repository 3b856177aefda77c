import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { connect } from 'node:net';
import type TestAgent from 'supertest/lib/agent';
import {
  OWNER_PASSWORD,
  createTestApp,
  type TestApp,
} from './support/test-app';

const HOST = 'localhost:3000';
const OWN = 'http://localhost:3000';
const JOB = {
  name: 'Mine',
  instruction: 'Say hi',
  cronExpression: '0 8 * * *',
};

type Route = { method: string; path: string };

/** Every documented route, from the app's own OpenAPI document. */
async function documentedRoutes(t: TestApp): Promise<Route[]> {
  const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({ method, path })),
  );
}

/** A body that would change something if the route accepted it. */
function bodyFor(method: string, path: string): Record<string, unknown> {
  const bodies: Record<string, Record<string, unknown>> = {
    'post /api/auth/setup': { password: 'attacker password' },
    'post /api/auth/login': { password: OWNER_PASSWORD },
    'post /api/chats': { title: 'Forged' },
    'patch /api/chats/{id}': { title: 'Renamed by a forged request' },
    'post /api/chats/{id}/messages': { content: 'forged message' },
    'post /api/cronjobs': { ...JOB, name: 'Forged' },
    'patch /api/cronjobs/{id}': { name: 'Forged', enabled: false },
    'patch /api/pulse': { enabled: true, notes: 'forged' },
    'patch /api/settings': { timezone: 'Asia/Tokyo' },
    'patch /api/system-instruction': { memory: 'forged memory' },
    'post /api/web-search/test': { query: 'forged' },
    'post /api/whatsapp/disconnect': { clearSession: true },
    'post /api/whatsapp/permissions': {
      phoneNumber: '+15550001111',
      displayName: 'Forged',
      canRead: true,
      canReply: true,
    },
    'patch /api/whatsapp/permissions/{id}': { canRead: true, canReply: true },
  };
  return bodies[`${method} ${path}`] ?? {};
}

/**
 * Issue 19 B from outside: every state-changing route the API documents, sent
 * the ways a page on another origin (or another port of this host) can send
 * it, is refused before anything runs, and nothing in the database changes.
 */
describe('acceptance: request forgery on every route (issue 19 B)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let ids: Record<string, string>;
  const db = () => t.app.get<Connection>(getConnectionToken());
  /** Every document of every collection (sessions included: a refused request logs nobody in or out). */
  const snapshot = async () => {
    const out: Record<string, unknown[]> = {};
    const names = (await db().listCollections()).map((c) => c.name).sort();
    for (const name of names)
      out[name] = await db()
        .collection(name)
        .find({})
        .sort({ _id: 1 })
        .toArray();
    return JSON.stringify(out);
  };
  const concrete = (path: string) =>
    path.replace(/\{(\w+)\}/g, (_m, name: string) =>
      path.startsWith('/api/cronjobs')
        ? ids['job']
        : path.startsWith('/api/whatsapp/permissions')
          ? ids['permission']
          : path.startsWith('/api/chats')
            ? ids['chat']
            : (ids[name] ?? '000000000000000000000000'),
    );

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    const chat = (
      await owner.post('/api/chats').send({ title: 'Mine' }).expect(201)
    ).body;
    const job = (await owner.post('/api/cronjobs').send(JOB).expect(201)).body;
    const permission = (
      await owner
        .post('/api/whatsapp/permissions')
        .send({ phoneNumber: '+15550002222', displayName: 'Friend' })
        .expect(200)
    ).body;
    ids = { chat: chat.id, job: job.id, permission: permission.id };
  });
  afterAll(() => t.close());

  const FORGED_HEADERS: Array<[string, Record<string, string>]> = [
    ['another port of the same host', { Origin: 'http://localhost:5173' }],
    [
      'another loopback name on another port',
      { Origin: 'http://127.0.0.1:8080' },
    ],
    ['another site', { Origin: 'https://evil.example' }],
    ['Origin null (sandboxed frame, file://)', { Origin: 'null' }],
    [
      'a look-alike of the own origin',
      { Origin: 'http://localhost:3000.evil.example' },
    ],
    ['the own origin with user info', { Origin: 'http://evil@localhost:3000' }],
    ['two origins in one header', { Origin: `${OWN}, https://evil.example` }],
    ['Sec-Fetch-Site same-site, no Origin', { 'Sec-Fetch-Site': 'same-site' }],
    [
      'Sec-Fetch-Site cross-site, no Origin',
      { 'Sec-Fetch-Site': 'cross-site' },
    ],
    ['Sec-Fetch-Site in capitals', { 'Sec-Fetch-Site': 'CROSS-SITE' }],
    [
      'the own Origin with Sec-Fetch-Site same-site',
      { Origin: OWN, 'Sec-Fetch-Site': 'same-site' },
    ],
    [
      'two Sec-Fetch-Site values',
      { 'Sec-Fetch-Site': 'same-origin, cross-site' },
    ],
  ];

  it('refuses every state-changing route from every foreign origin with 403, JSON or not, and changes nothing', async () => {
    const routes = (await documentedRoutes(t)).filter(
      (r) => !['get', 'head', 'options'].includes(r.method),
    );
    expect(routes.length).toBeGreaterThanOrEqual(20);
    const before = await snapshot();
    const wrong: string[] = [];
    for (const { method, path } of routes)
      for (const [name, headers] of FORGED_HEADERS) {
        const res = await owner[method as 'post'](concrete(path))
          .set('Host', HOST)
          .set(headers)
          .send(bodyFor(method, path));
        if (res.status !== 403)
          wrong.push(`${method} ${path} from ${name}: ${res.status}`);
      }
    expect(wrong).toEqual([]);
    expect(await snapshot()).toBe(before);
  });

  it('refuses every form body type (and a body without a type) on every state-changing route with 415, from any origin', async () => {
    const routes = (await documentedRoutes(t)).filter(
      (r) => !['get', 'head', 'options'].includes(r.method),
    );
    const before = await snapshot();
    const wrong: string[] = [];
    for (const { method, path } of routes) {
      // The upload routes take multipart by design; a backup to restore also comes as a raw archive.
      const upload =
        method === 'post' &&
        (path === '/api/attachments' || path === '/api/backup/restore');
      const rawArchive = method === 'post' && path === '/api/backup/restore';
      const body = JSON.stringify(bodyFor(method, path));
      for (const [type, payload] of [
        ['application/x-www-form-urlencoded', 'title=Forged&password=x'],
        ['text/plain', body],
        ['text/plain;charset=UTF-8', body],
        ['TEXT/PLAIN', body],
        [
          'multipart/form-data; boundary=b',
          `--b\r\nContent-Disposition: form-data; name="title"\r\n\r\nForged\r\n--b--\r\n`,
        ],
        ['', body],
        ['application/octet-stream', body],
        ['application/csp-report', body],
      ] as const) {
        if (upload && type.startsWith('multipart/')) continue;
        if (rawArchive && type === 'application/octet-stream') continue;
        for (const headers of [
          { Origin: OWN, 'Sec-Fetch-Site': 'same-origin' },
          {},
        ]) {
          const res = await owner[method as 'post'](concrete(path))
            .set('Host', HOST)
            .set(headers)
            .set('Content-Type', type)
            .send(payload);
          if (res.status !== 415)
            wrong.push(
              `${method} ${path} as "${type}" ${headers.Origin ? 'own origin' : 'no origin'}: ${res.status}`,
            );
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await snapshot()).toBe(before);
  });

  it('takes the upload only from the own origin', async () => {
    const upload = () =>
      owner
        .post('/api/attachments')
        .set('Host', HOST)
        .attach('file', Buffer.from('notes'), 'notes.txt');
    const before = await snapshot();
    for (const [, headers] of FORGED_HEADERS)
      await upload().set(headers).expect(403);
    expect(await snapshot()).toBe(before);
    await upload()
      .set('Origin', OWN)
      .set('Sec-Fetch-Site', 'same-origin')
      .expect(201);
  });

  it('takes a backup to restore only from the own origin (multipart or raw)', async () => {
    const restore = () =>
      owner.post('/api/backup/restore?replace=true').set('Host', HOST);
    const before = await snapshot();
    for (const [, headers] of FORGED_HEADERS) {
      await restore()
        .set(headers)
        .attach('file', Buffer.from('not a backup'), 'backup.tar.gz')
        .expect(403);
      await restore()
        .set(headers)
        .set('Content-Type', 'application/gzip')
        .send(Buffer.from('not a backup'))
        .expect(403);
    }
    expect(await snapshot()).toBe(before);
  });

  it('GET routes change nothing, whatever their Origin or method-override headers', async () => {
    const routes = (await documentedRoutes(t)).filter(
      (r) =>
        r.method === 'get' &&
        // Streams never end; they only read (tested in their own specs).
        !['/api/events', '/api/whatsapp/qr/stream'].includes(r.path),
    );
    expect(routes.length).toBeGreaterThanOrEqual(20);
    // Read once so that any lazily created defaults exist; the next reads must change nothing.
    for (const { path } of routes) await owner.get(concrete(path));
    const before = await snapshot();
    for (const { path } of routes)
      for (const override of ['DELETE', 'POST', 'PATCH']) {
        const res = await owner
          .get(concrete(path))
          .set('Host', HOST)
          .set('Origin', 'http://localhost:5173')
          .set('Sec-Fetch-Site', 'same-site')
          .set('X-HTTP-Method-Override', override)
          .set('X-HTTP-Method', override)
          .set('X-Method-Override', override)
          .query({ _method: override });
        expect(res.status).toBeLessThan(500);
      }
    expect(await snapshot()).toBe(before);
    // A forged POST cannot become a GET either.
    await owner
      .post('/api/cronjobs')
      .set('Host', HOST)
      .set('Origin', 'http://localhost:5173')
      .set('X-HTTP-Method-Override', 'GET')
      .query({ _method: 'GET' })
      .send({ ...JOB, name: 'Forged' })
      .expect(403);
    expect(await snapshot()).toBe(before);
  });

  it('a method in lower or mixed case never slips past the guard', async () => {
    const { url } = await t.serve();
    const { port } = new URL(url);
    const before = await snapshot();
    for (const method of ['post', 'Post', 'pOST', 'delete', 'patch', 'PUT']) {
      const body = JSON.stringify({ ...JOB, name: 'Forged' });
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.end(
          `${method} /api/cronjobs HTTP/1.1\r\nHost: ${HOST}\r\nOrigin: http://localhost:5173\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      });
      const status = Number(answer.split(' ')[1]);
      expect({ method, refused: status >= 400 }).toEqual({
        method,
        refused: true,
      });
    }
    expect(await snapshot()).toBe(before);
  });
});

describe('acceptance: TRUSTED_ORIGINS (issue 19 B)', () => {
  let t: TestApp;
  let owner: TestAgent;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        TRUSTED_ORIGINS: 'https://Metatron.Example/, http://192.0.2.10:3000',
      },
    });
    owner = await t.owner();
  });
  afterAll(() => t.close());

  const create = (headers: Record<string, string>, name: string) =>
    owner
      .post('/api/cronjobs')
      .set('Host', HOST)
      .set(headers)
      .send({ ...JOB, name });

  it('accepts the listed origins (normalised), also as another site', async () => {
    await create(
      { Origin: 'https://metatron.example', 'Sec-Fetch-Site': 'cross-site' },
      'Proxy',
    ).expect(201);
    await create(
      { Origin: 'http://192.0.2.10:3000', 'Sec-Fetch-Site': 'same-site' },
      'LAN',
    ).expect(201);
    await create(
      { Origin: OWN, 'Sec-Fetch-Site': 'same-origin' },
      'Console',
    ).expect(201);
  });

  it.each([
    ['another port of a listed host', 'https://metatron.example:8443'],
    ['another scheme of a listed host', 'http://metatron.example'],
    ['a subdomain of a listed host', 'https://evil.metatron.example'],
    ['a listed host as a prefix', 'https://metatron.example.evil.example'],
    ['a listed origin with a path', 'https://metatron.example/x'],
    ['null', 'null'],
  ])('still refuses %s (%s)', async (_case, origin) => {
    const before = (await owner.get('/api/cronjobs').expect(200)).body.length;
    await create({ Origin: origin }, 'Forged').expect(403);
    expect((await owner.get('/api/cronjobs').expect(200)).body.length).toBe(
      before,
    );
  });

  it('a listed origin still cannot send a form body', async () => {
    await owner
      .post('/api/cronjobs')
      .set('Host', HOST)
      .set('Origin', 'https://metatron.example')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify(JOB))
      .expect(415);
  });
});
