import { getConnectionToken } from '@nestjs/mongoose';
import { request as httpRequest } from 'node:http';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { JSON_TOO_DEEP_MESSAGE } from '../src/http/json-depth';
import { createTestApp, type TestApp } from './support/test-app';

/** The validation messages of a 400, as one list. */
const messages = (body: { message: string | string[] }) =>
  [body.message].flat();

/** `{"password":[[[…]]]}`: `depth` levels in all, mixing objects and arrays. */
const deepLogin = (depth: number) =>
  `{"password":${'[{"a":'.repeat((depth - 1) / 2)}1${'}]'.repeat((depth - 1) / 2)}}`;

/** Sends these exact bytes (supertest would serialise a Buffer as JSON); the status and parsed body. */
function rawPost(
  url: string,
  path: string,
  contentType: string,
  bytes: Buffer,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method: 'POST',
        headers: {
          'Content-Type': contentType,
          'Content-Length': bytes.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text);
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

/** UTF-16BE bytes of a string (Node has only the little-endian codec). */
function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i < le.length; i += 2)
    [le[i], le[i + 1]] = [le[i + 1], le[i]];
  return le;
}

function utf32(text: string, endian: 'le' | 'be'): Buffer {
  const out = Buffer.alloc(text.length * 4);
  for (let i = 0; i < text.length; i++) {
    if (endian === 'le') out.writeUInt32LE(text.charCodeAt(i), i * 4);
    else out.writeUInt32BE(text.charCodeAt(i), i * 4);
  }
  return out;
}

/**
 * Issue 19 H from outside: null, wrong types and deep JSON in the places and
 * spellings the issue does not list. Every refusal is a 4xx and writes nothing.
 */
describe('acceptance: input rules (issue 19 H)', () => {
  let t: TestApp;
  let owner: TestAgent;
  const db = () => t.app.get<Connection>(getConnectionToken());
  /** Every document of the collections a refused request could write. */
  const snapshot = async () => {
    const out: Record<string, unknown[]> = {};
    for (const name of [
      'chats',
      'messages',
      'settings',
      'cronjobs',
      'pulse',
      'whatsapp_permissions',
    ])
      out[name] = await db().collection(name).find({}).toArray();
    return JSON.stringify(out);
  };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
  });
  afterAll(() => t.close());

  describe('JSON depth in every encoding the JSON parser reads', () => {
    // The depth scan must read the body as the parser will: a charset it decodes differently hides the brackets.
    it.each([
      [
        'UTF-16BE with a BOM, charset=utf-16',
        'utf-16',
        (s: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(s)]),
      ],
      ['UTF-16BE without a BOM, charset=utf-16', 'utf-16', utf16be],
      ['UTF-16BE, charset=utf-16be', 'utf-16be', utf16be],
      [
        'UTF-16LE, charset=utf-16le',
        'utf-16le',
        (s: string) => Buffer.from(s, 'utf16le'),
      ],
      ['UTF-32LE, charset=utf-32', 'utf-32', (s: string) => utf32(s, 'le')],
      ['UTF-32BE, charset=utf-32be', 'utf-32be', (s: string) => utf32(s, 'be')],
      ['UTF-8, charset=utf8', 'utf8', (s: string) => Buffer.from(s)],
      ['UTF-8, charset=UTF-8', 'UTF-8', (s: string) => Buffer.from(s)],
    ])(
      'a 5,001-level login body in %s is refused with a 4xx before anything recurses',
      async (_case, charset, encode) => {
        const before = await snapshot();
        const { url } = await t.serve();
        const bytes = encode(deepLogin(5001));
        expect(bytes.length).toBeLessThan(100 * 1024);
        const res = await rawPost(
          url,
          '/api/auth/login',
          `application/json; charset=${charset}`,
          bytes,
        );
        // UTF-8 is scanned and refused as too deep; any other charset is refused (415) before it is parsed.
        expect(res).toEqual(
          /^utf-8$/i.test(charset)
            ? {
                status: 400,
                body: expect.objectContaining({
                  message: JSON_TOO_DEEP_MESSAGE,
                }),
              }
            : {
                status: 415,
                body: expect.objectContaining({ statusCode: 415 }),
              },
        );
        // The same bytes at 63 levels reach the login check (a wrong password, or 415 for the encoding).
        const shallow = await rawPost(
          url,
          '/api/auth/login',
          `application/json; charset=${charset}`,
          encode(deepLogin(63)),
        );
        expect([400, 415]).toContain(shallow.status);
        expect(shallow.body['message']).not.toBe(JSON_TOO_DEEP_MESSAGE);
        expect(await snapshot()).toBe(before);
      },
    );

    it('a body that nests objects in arrays in objects counts every level: 64 pass to the DTO, 65 do not', async () => {
      const body = (depth: number) =>
        `{"title":"x","deep":${'{"a":['.repeat((depth - 2) / 2)}${']}'.repeat((depth - 2) / 2)}}`;
      const at64 = await owner
        .post('/api/chats')
        .set('Content-Type', 'application/json')
        .send(body(64))
        .expect(400);
      expect(messages(at64.body)).toEqual(['property deep should not exist']);
      const at66 = await owner
        .post('/api/chats')
        .set('Content-Type', 'application/json')
        .send(body(66))
        .expect(400);
      expect(at66.body.message).toBe(JSON_TOO_DEEP_MESSAGE);
    });
  });

  describe('null and wrong types in nested fields, arrays and queries', () => {
    it.each([
      [
        'a quiet-hours start',
        'patch',
        '/api/pulse',
        { quietHours: [{ start: null, end: '07:00' }] },
        /Quiet hours #1 start must not be null/,
      ],
      [
        'an endpoint baseUrl',
        'patch',
        '/api/settings',
        {
          openaiCompatible: [{ name: 'local', baseUrl: null, models: ['m'] }],
        },
        /OpenAI-compatible endpoint #1 base URL must not be null/,
      ],
      [
        'an endpoint model',
        'patch',
        '/api/settings',
        {
          openaiCompatible: [
            { name: 'local', baseUrl: 'http://127.0.0.1:9/v1', models: [null] },
          ],
        },
        /models/,
      ],
      [
        'an endpoint in the list',
        'patch',
        '/api/settings',
        { openaiCompatible: [null] },
        /OpenAI-compatible endpoint #1 must not be null/,
      ],
      [
        'an attachment id',
        'post',
        '/api/chats/{chat}/messages',
        { content: 'hi', attachmentIds: [null] },
        /attachmentIds/,
      ],
      ['a title as an array', 'post', '/api/chats', { title: ['a'] }, /title/],
      ['a title as a number', 'post', '/api/chats', { title: 5 }, /title/],
      [
        'a title as an object',
        'post',
        '/api/chats',
        { title: { $ne: 1 } },
        /title/,
      ],
      [
        'a job name as an array',
        'post',
        '/api/cronjobs',
        { name: ['a'], instruction: 'x', cronExpression: '0 8 * * *' },
        /name/,
      ],
      [
        'a job instruction as a number',
        'post',
        '/api/cronjobs',
        { name: 'a', instruction: 5, cronExpression: '0 8 * * *' },
        /instruction/,
      ],
      [
        'a timezone as an array',
        'patch',
        '/api/settings',
        { timezone: ['Europe/Berlin'] },
        /timezone/,
      ],
      [
        'memory as a number',
        'patch',
        '/api/system-instruction',
        { memory: 5 },
        /memory/,
      ],
      ['a whole body of null', 'patch', '/api/settings', null, /./],
      ['a body that is an array', 'post', '/api/chats', [{ title: 'a' }], /./],
      ['a body that is a string', 'post', '/api/chats', '"a"', /./],
      [
        'a password as null',
        'post',
        '/api/auth/login',
        { password: null },
        /password must not be null/,
      ],
      [
        'a password as an array',
        'post',
        '/api/auth/login',
        { password: ['x'] },
        /password/,
      ],
    ])(
      '%s: 400 naming it, nothing stored',
      async (_case, method, path, body, message) => {
        const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
        const before = await snapshot();
        const res = await owner[method as 'post'](
          path.replace('{chat}', chat.id),
        )
          .set('Content-Type', 'application/json')
          .send(typeof body === 'string' ? body : JSON.stringify(body));
        expect({ status: res.status, messages: messages(res.body) }).toEqual({
          status: 400,
          messages: expect.arrayContaining([expect.stringMatching(message)]),
        });
        expect(await snapshot()).toBe(before);
      },
    );

    it.each([
      [
        'a __proto__ key',
        'post',
        '/api/chats',
        '{"title":"x","__proto__":{"title":null}}',
      ],
      [
        'a constructor key',
        'post',
        '/api/chats',
        '{"title":"x","constructor":{"prototype":{"a":1}}}',
      ],
      [
        'a nested __proto__',
        'patch',
        '/api/pulse',
        '{"quietHours":[{"start":"22:00","end":"07:00","__proto__":{"x":1}}]}',
      ],
      [
        'a duplicate key ending in null',
        'post',
        '/api/chats',
        '{"title":"x","title":null}',
      ],
      [
        'an escaped key spelling null',
        'post',
        '/api/chats',
        '{"\\u0074itle":null}',
      ],
      [
        'a number as a numeric string',
        'patch',
        '/api/pulse',
        '{"pulsesPerDay":"3"}',
      ],
      ['a boolean as a string', 'patch', '/api/pulse', '{"enabled":"true"}'],
    ])(
      '%s: 400, nothing stored, nothing polluted',
      async (_case, method, path, text) => {
        const before = await snapshot();
        const res = await owner[method as 'post'](path)
          .set('Content-Type', 'application/json')
          .send(text);
        expect(res.status).toBe(400);
        expect(await snapshot()).toBe(before);
        expect(({} as Record<string, unknown>)['title']).toBeUndefined();
        expect(({} as Record<string, unknown>)['x']).toBeUndefined();
      },
    );

    it('a __proto__ or constructor key in a query string is refused, not dropped', async () => {
      const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
      for (const query of [
        '__proto__=1',
        'constructor=1',
        'limit=1&__proto__=x',
      ])
        expect(
          (await owner.get(`/api/chats/${chat.id}/messages?${query}`)).status,
        ).toBe(400);
    });

    it('query strings with null, repeated keys, brackets or huge numbers are 4xx, never 500', async () => {
      const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
      const job = (
        await owner
          .post('/api/cronjobs')
          .send({ name: 'q', instruction: 'q', cronExpression: '0 8 * * *' })
          .expect(201)
      ).body;
      const failures: string[] = [];
      for (const path of [
        `/api/chats/${chat.id}/messages`,
        `/api/cronjobs/${job.id}/runs`,
        '/api/pulse/runs',
        '/api/whatsapp/messages',
        '/api/data/collections/chats/documents',
      ])
        for (const query of [
          'limit=null',
          'limit=1&limit=2',
          'limit[]=1',
          'limit[a]=1',
          'limit=1e400',
          'limit=-1',
          'limit=0x10',
          'skip=null',
          'before=null',
          'before[]=x',
          'cursor=null',
        ]) {
          const res = await owner.get(`${path}?${query}`);
          if (res.status >= 500)
            failures.push(`${path}?${query}: ${res.status}`);
        }
      for (const query of [
        'cronExpression=null',
        'cronExpression=a&cronExpression=b',
        'cronExpression[]=x',
      ]) {
        const res = await owner.get(`/api/cronjobs/preview?${query}`);
        if (res.status >= 500) failures.push(`preview?${query}: ${res.status}`);
      }
      expect(failures).toEqual([]);
    });

    it('very long strings are refused or stored whole, never a 500', async () => {
      const before = await snapshot();
      for (const [path, body] of [
        ['/api/chats', { title: 'x'.repeat(90_000) }],
        [
          '/api/cronjobs',
          {
            name: 'x'.repeat(90_000),
            instruction: 'x',
            cronExpression: '0 8 * * *',
          },
        ],
        [
          '/api/cronjobs',
          { name: 'x', instruction: 'x', cronExpression: '0 '.repeat(40_000) },
        ],
        ['/api/auth/login', { password: 'x'.repeat(90_000) }],
      ] as const) {
        const res = await owner.post(path).send(body);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
      }
      const tooBig = await owner
        .post('/api/chats')
        .send({ title: 'x'.repeat(2_000_000) });
      expect(tooBig.status).toBe(413);
      expect(await snapshot()).toBe(before);
    });
  });
});
