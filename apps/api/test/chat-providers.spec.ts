import type { ChatMessage, ChatSummary } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

describe('OpenAI-compatible endpoints and the turn time limit', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { LLM_TURN_TIMEOUT_MS: '1500' } });
    owner = await t.owner();
    client = await chatClient(t);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('sends `<endpoint>/<model>` to that endpoint with the model name alone, without a key when none is set', async () => {
    await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [{ name: 'local', baseUrl: fake.openaiBaseUrl }],
        primaryModel: 'local/llama3.2:3b',
      })
      .expect(200);
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    fake.openai.enqueue({ text: ['From the local model.'] });
    const events = await client.send(chat.id, 'hi');
    expect(eventsNamed(events, 'done')).toHaveLength(1);
    expect(fake.openai.requests[0].model).toBe('llama3.2:3b');
    expect(fake.openai.requests[0].apiKey).toBe('no-key');
    const messages: ChatMessage[] = (
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
    ).body;
    expect(messages[1]).toMatchObject({
      model: 'local/llama3.2:3b',
      content: 'From the local model.',
    });
  });

  it('names the endpoint when it cannot be reached', async () => {
    await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [{ name: 'gone', baseUrl: 'http://127.0.0.1:9/v1' }],
        primaryModel: 'gone/model',
      })
      .expect(200);
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    const events = await client.send(chat.id, 'hi');
    const error = eventsNamed(events, 'error')[0] as { message: string };
    expect(error.message).toMatch(/gone/);
    expect(error.message).toMatch(/reach/i);
  });

  it('ends a reply that runs past LLM_TURN_TIMEOUT_MS and keeps its text', async () => {
    await owner
      .patch('/api/settings')
      .send({
        openaiCompatible: [{ name: 'local', baseUrl: fake.openaiBaseUrl }],
        primaryModel: 'local/slow',
      })
      .expect(200);
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    fake.openai.enqueue({
      text: ['Slow ', 'words ', 'that ', 'never ', 'end'],
      chunkDelayMs: 600,
    });
    const started = Date.now();
    const events = await client.send(chat.id, 'take your time');
    expect(Date.now() - started).toBeLessThan(4000);
    const error = eventsNamed(events, 'error')[0] as {
      message: string;
      messageId: string;
    };
    expect(error.message).toBe(
      'The reply took longer than the 1.5 s limit and was stopped.',
    );
    const messages: ChatMessage[] = (
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
    ).body;
    expect(messages[1]).toMatchObject({
      id: error.messageId,
      status: 'error',
      content: expect.stringMatching(/^Slow words/),
    });
  });
});
