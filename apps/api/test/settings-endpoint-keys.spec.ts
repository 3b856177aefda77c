import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { chatClient, startFakeProviders } from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const OLLAMA_KEY = 'ollama-secret-key-1111';
const LAB_KEY = 'lab-secret-key-2222';
/** Loopback, nothing listens there: the endpoint the owner entered the key for. */
const OLLAMA_URL = 'http://127.0.0.1:9/v1';
const LAB_URL = 'http://127.0.0.1:9/lab';

describe('OpenAI-compatible endpoint keys stay with their address', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  const stored = async () =>
    (
      await t.app
        .get<Connection>(getConnectionToken())
        .collection('settings')
        .findOne({ _id: 'app_settings' as never })
    )?.['openaiCompatible'];
  const patch = (openaiCompatible: unknown[]) =>
    owner.patch('/api/settings').send({ openaiCompatible });
  const both = [
    { name: 'ollama', baseUrl: OLLAMA_URL, apiKey: '••••1111' },
    { name: 'lab', baseUrl: LAB_URL, apiKey: '••••2222' },
  ];

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
  });
  beforeEach(async () => {
    fake.reset();
    await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [
          { name: 'ollama', baseUrl: OLLAMA_URL, apiKey: OLLAMA_KEY },
          { name: 'lab', baseUrl: LAB_URL, apiKey: LAB_KEY },
        ],
        primaryModel: 'ollama/llama3.2',
      })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('refuses a new baseUrl with the masked key (400 naming the field), and the key never reaches the new host', async () => {
    const before = await stored();
    const res = await patch([
      { name: 'ollama', baseUrl: fake.openaiBaseUrl, apiKey: '••••1111' },
      both[1],
    ]).expect(400);
    expect(res.body.message).toEqual([
      `openaiCompatible[0].apiKey must be sent again because baseUrl changed (from ${OLLAMA_URL} to ${fake.openaiBaseUrl}): a stored key is only sent to the address it was entered for`,
    ]);
    expect(await stored()).toEqual(before);

    // A chat turn goes to the address the key was entered for, not to the new host.
    const client = await chatClient(t);
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    await client.send(chat.id, 'hello');
    expect(JSON.stringify(fake.openai.requests)).not.toContain(OLLAMA_KEY);
  });

  it.each([
    [
      'the key omitted',
      [{ name: 'ollama', baseUrl: 'http://evil.example/v1' }, both[1]],
      'openaiCompatible[0].apiKey must be sent again',
    ],
    [
      'the endpoints reordered',
      [both[1], { ...both[0], baseUrl: 'http://evil.example/v1' }],
      'openaiCompatible[1].apiKey must be sent again',
    ],
    [
      'another port',
      [{ ...both[0], baseUrl: 'http://127.0.0.1:10/v1' }, both[1]],
      'openaiCompatible[0].apiKey must be sent again',
    ],
    [
      'another scheme',
      [{ ...both[0], baseUrl: 'https://127.0.0.1:9/v1' }, both[1]],
      'openaiCompatible[0].apiKey must be sent again',
    ],
    [
      'another path (its case counts)',
      [{ ...both[0], baseUrl: 'http://127.0.0.1:9/V1' }, both[1]],
      'openaiCompatible[0].apiKey must be sent again',
    ],
    [
      'credentials added to the URL',
      [{ ...both[0], baseUrl: 'http://x@127.0.0.1:9/v1' }, both[1]],
      'openaiCompatible[0].apiKey must be sent again',
    ],
    [
      'the names swapped between the two addresses',
      [
        { name: 'ollama', baseUrl: LAB_URL, apiKey: '••••2222' },
        { name: 'lab', baseUrl: OLLAMA_URL, apiKey: '••••1111' },
      ],
      'openaiCompatible[1].apiKey must be sent again',
    ],
    [
      "another endpoint's masked key at the same address",
      [{ ...both[0], apiKey: '••••2222' }, both[1]],
      'openaiCompatible[0].apiKey is a masked value that does not match the stored key',
    ],
  ])('refuses %s and writes nothing', async (_case, endpoints, message) => {
    const before = await stored();
    const res = await patch(endpoints).expect(400);
    expect(JSON.stringify(res.body.message)).toContain(message);
    expect(await stored()).toEqual(before);
  });

  it('keeps the key when only the letter case of the host, a default port or a trailing slash differ', async () => {
    await patch([
      { ...both[0], baseUrl: 'HTTP://127.0.0.1:9/v1/' },
      { ...both[1], baseUrl: 'http://127.0.0.1:9/lab//' },
    ]).expect(200);
    await patch([
      {
        name: 'ollama',
        baseUrl: 'http://LocalHost:80/v1',
        apiKey: 'local-key-3333',
      },
      both[1],
    ]).expect(200);
    await patch([
      { name: 'ollama', baseUrl: 'http://localhost/v1', apiKey: '••••3333' },
      both[1],
    ]).expect(200);
    expect(await stored()).toEqual([
      {
        name: 'ollama',
        baseUrl: 'http://localhost/v1',
        apiKey: 'local-key-3333',
      },
      { name: 'lab', baseUrl: 'http://127.0.0.1:9/lab', apiKey: LAB_KEY },
    ]);
  });

  it('keeps keys by name when the endpoints are reordered', async () => {
    await patch([both[1], both[0]]).expect(200);
    expect(await stored()).toEqual([
      { name: 'lab', baseUrl: LAB_URL, apiKey: LAB_KEY },
      { name: 'ollama', baseUrl: OLLAMA_URL, apiKey: OLLAMA_KEY },
    ]);
  });

  it('accepts a new baseUrl with the key sent again, or with the key removed', async () => {
    await patch([
      {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11/v1',
        apiKey: 'new-key-4444',
      },
      { name: 'lab', baseUrl: 'http://127.0.0.1:12/lab', apiKey: null },
    ]).expect(200);
    expect(await stored()).toEqual([
      {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11/v1',
        apiKey: 'new-key-4444',
      },
      { name: 'lab', baseUrl: 'http://127.0.0.1:12/lab', apiKey: null },
    ]);
  });

  it("a renamed endpoint sent with the masked key gets no key (never another endpoint's)", async () => {
    await patch([
      {
        name: 'ollama2',
        baseUrl: 'http://evil.example/v1',
        apiKey: '••••1111',
      },
      { name: 'lab2', baseUrl: LAB_URL, apiKey: '••••2222' },
    ]).expect(400); // primaryModel still names 'ollama'
    const res = await owner
      .patch('/api/settings')
      .send({
        primaryModel: 'ollama2/llama3.2',
        openaiCompatible: [
          {
            name: 'ollama2',
            baseUrl: 'http://evil.example/v1',
            apiKey: '••••1111',
          },
          { name: 'lab2', baseUrl: LAB_URL, apiKey: '••••2222' },
        ],
      })
      .expect(200);
    expect(res.body.openaiCompatible).toEqual([
      { name: 'ollama2', baseUrl: 'http://evil.example/v1', apiKey: null },
      { name: 'lab2', baseUrl: LAB_URL, apiKey: null },
    ]);
    expect(JSON.stringify(await stored())).not.toMatch(/1111|2222/);
  });
});
