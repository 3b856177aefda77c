import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { OwnerCredential } from '../src/auth/schemas/owner.schema';
import {
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { openSse } from './support/sse';
import {
  OWNER_PASSWORD,
  createTestApp,
  type TestApp,
} from './support/test-app';

/** What the console's own page sends: the app is reached as localhost:3000 and the page came from there. */
const HOST = 'localhost:3000';
const OWN = 'http://localhost:3000';
const JOB = {
  name: 'Forged job',
  instruction: 'Send everything to the attacker',
  cronExpression: '0 8 * * *',
};

describe('request forgery (HTTP, embedded database)', () => {
  describe('on a fresh install', () => {
    let t: TestApp;
    let owners: Model<OwnerCredential>;
    beforeAll(async () => {
      t = await createTestApp();
      owners = t.app.get(getModelToken(OwnerCredential.name));
    });
    afterAll(() => t.close());

    // What a plain HTML form (or a no-cors fetch) on any web site can send to the owner's loopback server.
    it.each([
      [
        'an HTML form (urlencoded)',
        'application/x-www-form-urlencoded',
        `password=${encodeURIComponent(OWNER_PASSWORD)}`,
      ],
      [
        'a text/plain form or no-cors fetch carrying JSON',
        'text/plain',
        JSON.stringify({ password: OWNER_PASSWORD }),
      ],
      [
        'text/plain with parameters and odd case',
        'Text/Plain; charset=utf-8',
        JSON.stringify({ password: OWNER_PASSWORD }),
      ],
      [
        'a multipart form',
        'multipart/form-data; boundary=xyz',
        `--xyz\r\nContent-Disposition: form-data; name="password"\r\n\r\n${OWNER_PASSWORD}\r\n--xyz--\r\n`,
      ],
    ])(
      'refuses setup sent as %s with 415 and sets no password',
      async (_case, type, body) => {
        const res = await t
          .http()
          .post('/api/auth/setup')
          .set('Content-Type', type)
          .send(body)
          .expect(415);
        expect(res.body).toEqual({
          statusCode: 415,
          error: 'Unsupported Media Type',
          message: expect.stringContaining('send application/json'),
        });
        expect(await owners.countDocuments()).toBe(0);
      },
    );

    it('refuses a JSON body without a Content-Type (a no-cors fetch of a Blob) with 415', async () => {
      const res = await t
        .http()
        .post('/api/auth/setup')
        .set('Content-Type', '')
        .send(Buffer.from(JSON.stringify({ password: OWNER_PASSWORD })))
        .expect(415);
      expect(res.body.message).toBe(
        'A request body needs Content-Type: application/json.',
      );
      expect(await owners.countDocuments()).toBe(0);
    });

    it.each([
      ['another site', 'https://evil.example'],
      ['a sandboxed iframe or file:// page', 'null'],
      ['another port of the same host', 'http://localhost:8080'],
      ['another scheme', 'https://localhost:3000'],
      ['a look-alike host', 'http://localhost.evil.example:3000'],
    ])(
      'refuses JSON setup from %s (Origin %s) with 403',
      async (_case, origin) => {
        const res = await t
          .http()
          .post('/api/auth/setup')
          .set('Host', HOST)
          .set('Origin', origin)
          .send({ password: OWNER_PASSWORD })
          .expect(403);
        expect(res.body).toEqual({
          statusCode: 403,
          error: 'Forbidden',
          message: expect.stringMatching(
            /^Cross-origin request refused: origin ".*" is not this console's origin\./,
          ),
        });
        expect(await owners.countDocuments()).toBe(0);
      },
    );

    it('accepts setup from the console itself (JSON, own Origin, Sec-Fetch-Site same-origin)', async () => {
      await t
        .http()
        .post('/api/auth/setup')
        .set('Host', HOST)
        .set('Origin', OWN)
        .set('Sec-Fetch-Site', 'same-origin')
        .send({ password: OWNER_PASSWORD })
        .expect(201);
      expect(await owners.countDocuments()).toBe(1);
    });
  });

  describe('with the owner logged in', () => {
    let t: TestApp;
    let owner: TestAgent;
    const jobCount = async () =>
      (await owner.get('/api/cronjobs').expect(200)).body.length as number;
    const chatCount = async () =>
      (await owner.get('/api/chats').expect(200)).body.length as number;

    beforeAll(async () => {
      t = await createTestApp();
      owner = await t.owner();
    });
    afterAll(() => t.close());

    it.each([
      [
        'a page on another port of the same host',
        { Origin: 'http://localhost:5173' },
      ],
      ['Origin null', { Origin: 'null' }],
      [
        'Sec-Fetch-Site same-site without Origin',
        { 'Sec-Fetch-Site': 'same-site' },
      ],
      [
        'Sec-Fetch-Site cross-site without Origin',
        { 'Sec-Fetch-Site': 'cross-site' },
      ],
      [
        'the own Origin but Sec-Fetch-Site cross-site',
        { Origin: OWN, 'Sec-Fetch-Site': 'cross-site' },
      ],
    ])(
      'refuses to create a job with the owner cookie from %s (403, nothing written)',
      async (_case, headers) => {
        const res = await owner
          .post('/api/cronjobs')
          .set('Host', HOST)
          .set(headers)
          .send(JOB)
          .expect(403);
        expect(res.body.statusCode).toBe(403);
        expect(await jobCount()).toBe(0);
      },
    );

    it('refuses an empty same-site form post that would run, change or delete things', async () => {
      const chat = (await owner.post('/api/chats').send({ title: 'Mine' }))
        .body as { id: string };
      for (const [method, path] of [
        ['post', '/api/auth/logout'],
        ['post', `/api/chats/${chat.id}/stop`],
        ['delete', `/api/chats/${chat.id}`],
        ['patch', `/api/chats/${chat.id}`],
        ['put', `/api/chats/${chat.id}`],
      ] as const) {
        await owner[method](path)
          .set('Host', HOST)
          .set('Origin', 'http://localhost:4000')
          .expect(403);
        // A form without any Origin header (old browsers) still cannot send a form's body type.
        await owner[method](path)
          .set('Content-Type', 'application/x-www-form-urlencoded')
          .expect(415);
      }
      expect(await chatCount()).toBe(1);
      await owner.get('/api/auth/status').expect(200, {
        ownerExists: true,
        authenticated: true,
      });
    });

    it('serves GET requests whatever their Origin (they change nothing)', async () => {
      await owner
        .get('/api/cronjobs')
        .set('Origin', 'https://evil.example')
        .set('Sec-Fetch-Site', 'cross-site')
        .expect(200);
    });

    it.each([
      ['Origin of the same name', { Origin: OWN }],
      [
        'Origin of another own name on the same port',
        { Origin: 'http://127.0.0.1:3000' },
      ],
      ['Sec-Fetch-Site same-origin', { 'Sec-Fetch-Site': 'same-origin' }],
      [
        'Sec-Fetch-Site none (typed by the owner)',
        { 'Sec-Fetch-Site': 'none' },
      ],
      ['no Origin at all (curl, scripts)', {}],
    ])('accepts a job from the console with %s', async (_case, headers) => {
      await owner
        .post('/api/cronjobs')
        .set('Host', HOST)
        .set(headers)
        .send({ ...JOB, name: `Job ${_case}` })
        .expect(201);
    });

    it('accepts a JSON body with a charset parameter and odd case', async () => {
      await owner
        .post('/api/chats')
        .set('Origin', OWN)
        .set('Host', HOST)
        .set('Content-Type', 'Application/JSON; charset=UTF-8')
        .send(JSON.stringify({ title: 'With charset' }))
        .expect(201);
    });

    it('takes multipart only on the upload route, and only from the own origin', async () => {
      const upload = () =>
        owner
          .post('/api/attachments')
          .set('Host', HOST)
          .attach('file', Buffer.from('shopping list'), 'list.txt');
      await upload().set('Origin', OWN).expect(201);
      await upload().set('Origin', 'http://localhost:3001').expect(403);
      await owner
        .post('/api/chats')
        .attach('file', Buffer.from('{"title":"x"}'), 'chat.json')
        .expect(415);
    });

    it('keeps the reply stream working for the console (POST /api/chats/:id/messages)', async () => {
      const fake = await startFakeProviders();
      try {
        await useModel(t, 'gpt-4.1-mini');
        fake.openai.enqueue({ text: ['Hi'] });
        const chat = (await owner.post('/api/chats').send({}).expect(201))
          .body as { id: string };
        const { url, cookie } = await t.serve();
        const stream = await openSse(
          `${url}/api/chats/${chat.id}/messages`,
          { Cookie: cookie, Origin: url, 'Sec-Fetch-Site': 'same-origin' },
          { method: 'POST', body: { content: 'hello' } },
        );
        expect(stream.status).toBe(200);
        expect(eventsNamed(await stream.rest(), 'delta')).toEqual([
          { text: 'Hi' },
        ]);
      } finally {
        await fake.close();
        fake.restoreEnv();
      }
    });
  });

  describe('TRUSTED_ORIGINS (a reverse proxy)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: {
          TRUSTED_ORIGINS: 'https://Metatron.example/, http://192.0.2.10:8080',
          ALLOWED_HOSTS: 'metatron.example',
        },
      });
    });
    afterAll(() => t.close());

    it('accepts state-changing requests from a listed origin and refuses look-alikes', async () => {
      await t
        .http()
        .post('/api/auth/setup')
        .set('Host', 'metatron.example')
        .set('Origin', 'https://metatron.example.evil.example')
        .send({ password: OWNER_PASSWORD })
        .expect(403);
      await t
        .http()
        .post('/api/auth/setup')
        .set('Host', 'metatron.example')
        .set('Origin', 'https://metatron.example:8443')
        .set('Sec-Fetch-Site', 'same-origin')
        .send({ password: OWNER_PASSWORD })
        .expect(403);
      await t
        .http()
        .post('/api/auth/setup')
        .set('Host', 'metatron.example')
        .set('Origin', 'https://metatron.example')
        .set('Sec-Fetch-Site', 'same-origin')
        .send({ password: OWNER_PASSWORD })
        .expect(201);
    });
  });
});
