import type { AppSettingsView } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { createTestApp, type TestApp } from './support/test-app';

describe('settings', () => {
  let t: TestApp;
  let owner: TestAgent;
  const stored = () =>
    t.app
      .get<Connection>(getConnectionToken())
      .collection('settings')
      .findOne({ _id: 'app_settings' as never });

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
  });
  afterAll(() => t.close());

  it('starts empty with the server time zone', async () => {
    const res = await owner.get('/api/settings').expect(200);
    const view: AppSettingsView = res.body;
    expect(view).toMatchObject({
      geminiApiKey: null,
      openaiApiKey: null,
      openaiCompatible: [],
      primaryModel: null,
      imageModel: null,
      braveApiKey: null,
    });
    expect(view.timezone).toEqual(expect.any(String));
  });

  it('stores secrets but only ever answers them masked', async () => {
    const res = await owner
      .patch('/api/settings')
      .send({
        geminiApiKey: 'AIzaSyExampleKey-9876',
        openaiApiKey: 'sk-proj-example-abcd',
        braveApiKey: 'short',
        timezone: 'Europe/Paris',
        primaryModel: 'gemini-2.5-flash',
      })
      .expect(200);
    expect(res.body).toMatchObject({
      geminiApiKey: '••••9876',
      openaiApiKey: '••••abcd',
      braveApiKey: '••••',
      timezone: 'Europe/Paris',
      primaryModel: 'gemini-2.5-flash',
    });
    expect(
      JSON.stringify((await owner.get('/api/settings').expect(200)).body),
    ).not.toMatch(/AIzaSy|sk-proj|short/);
    expect(await stored()).toMatchObject({
      geminiApiKey: 'AIzaSyExampleKey-9876',
      openaiApiKey: 'sk-proj-example-abcd',
    });
  });

  it('keeps a secret when the masked value comes back, and clears it on null or ""', async () => {
    await owner
      .patch('/api/settings')
      .send({ geminiApiKey: '••••9876', openaiApiKey: null, braveApiKey: '' })
      .expect(200);
    // Fields not sent stay as they were.
    expect(await stored()).toMatchObject({
      geminiApiKey: 'AIzaSyExampleKey-9876',
      openaiApiKey: null,
      braveApiKey: null,
      primaryModel: 'gemini-2.5-flash',
      timezone: 'Europe/Paris',
    });
  });

  it('routes endpoint models and keeps endpoint keys by name', async () => {
    await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [
          {
            name: 'ollama',
            baseUrl: 'http://127.0.0.1:11434/v1/',
            apiKey: 'ollama-secret-key-1111',
          },
        ],
        primaryModel: 'ollama/llama3.2',
      })
      .expect(200);
    const res = await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [
          {
            name: 'ollama',
            baseUrl: 'http://127.0.0.1:11434/v1',
            apiKey: '••••1111',
          },
        ],
      })
      .expect(200);
    expect(res.body.openaiCompatible).toEqual([
      {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: '••••1111',
      },
    ]);
    expect((await stored())?.['openaiCompatible']).toEqual([
      {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: 'ollama-secret-key-1111',
      },
    ]);
  });

  it.each([
    [{ timezone: 'Mars/Olympus' }, 'timezone must be an IANA time zone'],
    [{ primaryModel: 'llama3' }, 'Primary model must be'],
    [
      { primaryModel: 'lmstudio/qwen' },
      "names the endpoint 'lmstudio', which is not in openaiCompatible",
    ],
    [{ openaiCompatible: [] }, "names the endpoint 'ollama'"],
    [
      { openaiCompatible: [{ name: 'bad name', baseUrl: 'http://x' }] },
      '"OpenAI-compatible endpoint #1 name must be 1-40 letters, digits, - or _"',
    ],
    [
      { openaiCompatible: [{ name: 'a', baseUrl: 'ftp://x' }] },
      '"OpenAI-compatible endpoint #1 base URL must be an http(s) URL"',
    ],
    [
      {
        openaiCompatible: [
          { name: 'a', baseUrl: 'http://x' },
          { name: 'a', baseUrl: 'http://y' },
        ],
      },
      "two endpoints named 'a'",
    ],
    [{ geminiApiKey: 42 }, 'Gemini API key must be a string'],
    [{ imageModel: 'image model!' }, 'Image model must be a model id'],
    [{ unknownField: true }, 'property unknownField should not exist'],
  ])('refuses %j and writes nothing', async (body, message) => {
    const before = await stored();
    const res = await owner.patch('/api/settings').send(body).expect(400);
    expect(JSON.stringify(res.body.message)).toContain(message);
    expect(await stored()).toEqual(before);
  });

  it('needs the owner session', async () => {
    await t.http().get('/api/settings').expect(401);
    await t.http().patch('/api/settings').send({ timezone: 'UTC' }).expect(401);
  });
});
