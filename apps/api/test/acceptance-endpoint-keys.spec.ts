import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { createTestApp, type TestApp } from './support/test-app';

const KEY = 'endpoint-secret-key-7777';
const MASK = '••••7777';
const URL_ = 'http://127.0.0.1:9/v1';

/** Issue 19 G from outside: URL spellings that look alike but lead elsewhere, and two-step changes. */
describe('acceptance: endpoint keys follow their address (issue 19 G)', () => {
  let t: TestApp;
  let owner: TestAgent;
  const stored = async () =>
    JSON.stringify(
      await t.app
        .get<Connection>(getConnectionToken())
        .collection('settings')
        .findOne({ _id: 'app_settings' as never }),
    );
  const patch = (body: Record<string, unknown>) =>
    owner.patch('/api/settings').send(body);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
  });
  beforeEach(async () => {
    await patch({
      primaryModel: null,
      openaiCompatible: [{ name: 'local', baseUrl: URL_, apiKey: KEY }],
    }).expect(200);
  });
  afterAll(() => t.close());

  it.each([
    [
      'user info that makes another host',
      'http://127.0.0.1:9@collector.example/v1',
    ],
    ['a backslash before an @', 'http://127.0.0.1:9\\@collector.example/v1'],
    ['a trailing dot on the host', 'http://127.0.0.1.:9/v1'],
    ['another loopback address', 'http://127.0.0.2:9/v1'],
    ['a query string', 'http://127.0.0.1:9/v1?to=collector.example'],
    ['a fragment', 'http://127.0.0.1:9/v1#x'],
    ['a longer path', 'http://127.0.0.1:9/v1/proxy'],
    ['a dot segment', 'http://127.0.0.1:9/v1/../v2'],
    ['leading whitespace', ' http://collector.example/v1'],
    ['IPv6 loopback', 'http://[::1]:9/v1'],
  ])(
    'a new baseUrl with %s needs the key again (masked or omitted), nothing stored',
    async (_case, baseUrl) => {
      const before = await stored();
      for (const endpoint of [
        { name: 'local', baseUrl, apiKey: MASK },
        { name: 'local', baseUrl },
      ]) {
        const res = await patch({ openaiCompatible: [endpoint] });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.message)).toMatch(
          // The service names the key field; the validation pipe names a malformed URL in words.
          /openaiCompatible\[0\]\.apiKey|OpenAI-compatible endpoint #1 base URL/,
        );
        expect(await stored()).toBe(before);
      }
      expect(await stored()).toContain(KEY);
    },
  );

  it.each([
    ['upper-case scheme and a default port', 'HTTP://127.0.0.1:9/v1/'],
    ['trailing slashes', 'http://127.0.0.1:9/v1///'],
  ])(
    'the same address spelled with %s keeps the key',
    async (_case, baseUrl) => {
      await patch({
        openaiCompatible: [{ name: 'local', baseUrl, apiKey: MASK }],
      }).expect(200);
      expect(await stored()).toContain(KEY);
    },
  );

  it('two steps (move away without the key, then back with the mask) never bring the key back', async () => {
    // Remove then re-add under the same name at another address: the key is gone, not kept for later.
    await patch({ openaiCompatible: [] }).expect(200);
    await patch({
      openaiCompatible: [
        { name: 'local', baseUrl: 'http://collector.example/v1', apiKey: MASK },
      ],
    }).expect(200);
    expect(await stored()).not.toContain('7777');
    await patch({
      openaiCompatible: [{ name: 'local', baseUrl: URL_, apiKey: MASK }],
    }).expect(200);
    expect(await stored()).not.toContain('7777');
  });

  it('the provider keys that go to a fixed host take no address from the API', async () => {
    for (const field of [
      'openaiBaseUrl',
      'geminiBaseUrl',
      'braveBaseUrl',
      'braveSearchBaseUrl',
      'baseUrl',
    ])
      await patch({ [field]: 'http://collector.example' }).expect(400);
    await owner
      .post('/api/web-search/test')
      .send({ query: 'x', baseUrl: 'http://collector.example' })
      .expect(400);
  });
});
