import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type TestAgent from 'supertest/lib/agent';
import {
  GEMINI_TEST_KEY,
  OPENAI_TEST_KEY,
  startFakeProviders,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const WRONG_OPENAI_KEY = 'sk-wrong-key-abcdefghijklmnop9876';
const WRONG_GEMINI_KEY = 'AIza-wrong-key-zyxwvutsrqpo5432';

/** The key, or any 8 characters of it, must not be in an answer. */
function expectNoKey(body: unknown, key: string): void {
  const text = JSON.stringify(body);
  for (let i = 0; i + 8 <= key.length; i++)
    expect(text).not.toContain(key.slice(i, i + 8));
}

/** `GET /api/settings/models` and `POST /api/settings/test` against the fake providers' model lists. */
describe('settings: models and connection test', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const test = (body: object) =>
    owner.post('/api/settings/test').send(body).expect(200);

  describe('POST /api/settings/test', () => {
    it('lists the chat models of a good OpenAI key, and of a good Gemini key', async () => {
      fake.openaiModels.key = OPENAI_TEST_KEY;
      const openai = await test({
        provider: 'openai',
        apiKey: OPENAI_TEST_KEY,
      });
      expect(openai.body).toEqual({
        ok: true,
        models: [
          { id: 'gpt-4.1', provider: 'openai' },
          { id: 'gpt-4.1-mini', provider: 'openai' },
          { id: 'o4-mini', provider: 'openai' },
        ],
      });
      expect(fake.openaiModels.requests).toEqual([
        { apiKey: OPENAI_TEST_KEY, query: {} },
      ]);

      fake.geminiModels.key = GEMINI_TEST_KEY;
      const gemini = await test({
        provider: 'gemini',
        apiKey: GEMINI_TEST_KEY,
      });
      expect(gemini.body).toEqual({
        ok: true,
        models: [
          { id: 'gemini-2.5-flash', provider: 'gemini' },
          { id: 'gemini-2.5-pro', provider: 'gemini' },
        ],
      });
      expectNoKey(openai.body, OPENAI_TEST_KEY);
      expectNoKey(gemini.body, GEMINI_TEST_KEY);
    });

    it('follows Gemini’s pages and keeps at most 500 models of one provider', async () => {
      fake.geminiModels.ids = Array.from(
        { length: 1203 },
        (_, i) => `gemini-test-${String(i).padStart(4, '0')}`,
      );
      const res = await test({ provider: 'gemini', apiKey: GEMINI_TEST_KEY });
      expect(res.body.models).toHaveLength(500);
      expect(res.body.models[499].id).toBe('gemini-test-0499');
      expect(fake.geminiModels.requests).toHaveLength(2);
    });

    it('says in plain words that a key was refused, without the key', async () => {
      fake.openaiModels.key = OPENAI_TEST_KEY;
      const openai = await test({
        provider: 'openai',
        apiKey: WRONG_OPENAI_KEY,
      });
      expect(openai.body).toEqual({
        ok: false,
        error:
          'OpenAI refused the API key (401): check that it is copied whole and still active.',
      });
      fake.geminiModels.key = GEMINI_TEST_KEY;
      const gemini = await test({
        provider: 'gemini',
        apiKey: WRONG_GEMINI_KEY,
      });
      expect(gemini.body).toEqual({
        ok: false,
        error:
          'Gemini refused the API key (400): check that it is copied whole and still active.',
      });
      expectNoKey(openai.body, WRONG_OPENAI_KEY);
      expectNoKey(gemini.body, WRONG_GEMINI_KEY);
    });

    it('tests an OpenAI-compatible endpoint: its models, unreachable, or not such a server', async () => {
      fake.openaiModels.key = 'local-secret-key-000111';
      const good = await test({
        endpoint: {
          name: 'local',
          baseUrl: `${fake.openaiBaseUrl}/`,
          apiKey: 'local-secret-key-000111',
        },
      });
      expect(good.body.ok).toBe(true);
      expect(good.body.models).toContainEqual({
        id: 'local/gpt-4.1-mini',
        provider: 'openai-compatible',
      });
      expectNoKey(good.body, 'local-secret-key-000111');

      const port = await closedPort();
      const unreachable = await test({
        endpoint: { name: 'local', baseUrl: `http://127.0.0.1:${port}/v1` },
      });
      expect(unreachable.body).toEqual({
        ok: false,
        error: `Could not reach local at 127.0.0.1:${port}: connection refused (ECONNREFUSED).`,
      });

      const notCompatible = await test({
        endpoint: { name: 'local', baseUrl: fake.url },
      });
      expect(notCompatible.body.ok).toBe(false);
      expect(notCompatible.body.error).toContain(
        'answered, but not as an OpenAI-compatible server',
      );
      expect(notCompatible.body.error).toContain('it usually ends in /v1');

      const refused = await test({
        endpoint: {
          name: 'local',
          baseUrl: fake.openaiBaseUrl,
          apiKey: 'nope-1234',
        },
      });
      expect(refused.body.error).toBe(
        'local refused the key (401): check that it is copied whole and still active.',
      );
    });

    it('uses the stored key when the key is left out or masked, and only for its own address', async () => {
      await owner
        .patch('/api/settings')
        .send({
          openaiApiKey: OPENAI_TEST_KEY,
          openaiCompatible: [
            {
              name: 'local',
              baseUrl: fake.openaiBaseUrl,
              apiKey: 'stored-local-key-42',
            },
          ],
        })
        .expect(200);
      try {
        fake.openaiModels.key = OPENAI_TEST_KEY;
        expect((await test({ provider: 'openai' })).body.ok).toBe(true);
        expect(
          (await test({ provider: 'openai', apiKey: '••••1234' })).body.ok,
        ).toBe(true);

        fake.openaiModels.key = 'stored-local-key-42';
        const masked = await test({
          endpoint: {
            name: 'local',
            baseUrl: fake.openaiBaseUrl,
            apiKey: '••••y-42',
          },
        });
        expect(masked.body.ok).toBe(true);
        // The stored key never goes to another address.
        const requestsBefore = fake.openaiModels.requests.length;
        const moved = await test({
          endpoint: {
            name: 'local',
            baseUrl: `${fake.url}/other/v1`,
            apiKey: '••••y-42',
          },
        });
        expect(moved.body.ok).toBe(false);
        expect(moved.body.error).toContain('enter the key itself');
        expect(fake.openaiModels.requests).toHaveLength(requestsBefore);
      } finally {
        await owner
          .patch('/api/settings')
          .send({ openaiApiKey: null, openaiCompatible: [] })
          .expect(200);
      }
      const none = await test({ provider: 'gemini' });
      expect(none.body).toEqual({
        ok: false,
        error: 'Enter a Gemini API key first.',
      });
    });

    it('refuses a request that names no or both targets, or a bad one, with 400', async () => {
      const cases: Array<[object, string]> = [
        [{}, 'send either provider'],
        [
          {
            provider: 'openai',
            endpoint: { name: 'a', baseUrl: 'http://127.0.0.1:1/v1' },
          },
          'send either provider',
        ],
        [{ provider: 'anthropic' }, 'provider must be gemini or openai'],
        [
          { endpoint: { name: 'a b', baseUrl: 'http://127.0.0.1:1/v1' } },
          'name must be',
        ],
        [
          { endpoint: { name: 'a', baseUrl: 'ftp://127.0.0.1/v1' } },
          'Endpoint base URL must be an http(s) URL',
        ],
        [{ provider: 'openai', apiKey: 5 }, 'API key must be a string'],
      ];
      for (const [body, message] of cases) {
        const res = await owner
          .post('/api/settings/test')
          .send(body)
          .expect(400);
        expect(JSON.stringify(res.body.message)).toContain(message);
      }
      expect(fake.openaiModels.requests).toHaveLength(0);
    });
  });

  describe('GET /api/settings/models', () => {
    it('lists the models of every configured provider and names the ones that failed', async () => {
      const port = await closedPort();
      await owner
        .patch('/api/settings')
        .send({
          openaiApiKey: OPENAI_TEST_KEY,
          geminiApiKey: GEMINI_TEST_KEY,
          openaiCompatible: [
            { name: 'local', baseUrl: fake.openaiBaseUrl },
            { name: 'dead', baseUrl: `http://127.0.0.1:${port}/v1` },
          ],
        })
        .expect(200);
      fake.openaiModels.ids = ['gpt-4.1-mini', 'llama3'];
      const res = await owner.get('/api/settings/models').expect(200);
      expect(res.body.models).toEqual(
        expect.arrayContaining([
          { id: 'gemini-2.5-flash', provider: 'gemini' },
          { id: 'gpt-4.1-mini', provider: 'openai' },
          { id: 'local/llama3', provider: 'openai-compatible' },
          { id: 'local/gpt-4.1-mini', provider: 'openai-compatible' },
        ]),
      );
      // `llama3` is no OpenAI model id: OpenAI's own list leaves it out.
      expect(res.body.models).not.toContainEqual({
        id: 'llama3',
        provider: 'openai',
      });
      expect(res.body.problems).toEqual([
        {
          provider: 'openai-compatible',
          name: 'dead',
          error: `Could not reach dead at 127.0.0.1:${port}: connection refused (ECONNREFUSED).`,
        },
      ]);
      expectNoKey(res.body, OPENAI_TEST_KEY);
      expectNoKey(res.body, GEMINI_TEST_KEY);

      // Kept for a minute unless the settings change.
      const asked = fake.geminiModels.requests.length;
      await owner.get('/api/settings/models').expect(200);
      expect(fake.geminiModels.requests).toHaveLength(asked);
      t.clock.advance(61_000);
      await owner.get('/api/settings/models').expect(200);
      expect(fake.geminiModels.requests).toHaveLength(asked + 1);
      await owner
        .patch('/api/settings')
        .send({ openaiCompatible: [] })
        .expect(200);
      const after = await owner.get('/api/settings/models').expect(200);
      expect(after.body.problems).toEqual([]);
      expect(fake.geminiModels.requests).toHaveLength(asked + 2);
    });

    it('needs the owner session', async () => {
      await t.http().get('/api/settings/models').expect(401);
      await t
        .http()
        .post('/api/settings/test')
        .send({ provider: 'openai' })
        .expect(401);
    });
  });
});
