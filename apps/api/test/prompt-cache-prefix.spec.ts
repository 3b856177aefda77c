import { encode } from 'gpt-tokenizer';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** Provider prompt caching reuses a prefix of at least this many tokens. */
const CACHEABLE_PREFIX_TOKENS = 1_024;

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

describe('prompt layout for provider prompt caching', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
    t.clock.set(new Date('2026-11-23T08:59:00Z'));
    await owner
      .patch('/api/settings')
      .send({ timezone: 'Europe/Paris' })
      .expect(200);
    await owner
      .patch('/api/system-instruction')
      .send({ memory: '- Owner: Ada, prefers short answers.' })
      .expect(200);
    await owner
      .patch('/api/pulse')
      .send({ enabled: true, activeDays: [0, 1, 2, 3, 4, 5, 6] })
      .expect(200);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  /** The system prompt the OpenAI adapter sent for each owner turn, in order. */
  const systemPrompts = (): string[] =>
    fake.openai.requests
      .map((r) => r.body.messages as Array<{ role: string; content: string }>)
      .map((messages) => messages.find((m) => m.role === 'system')?.content)
      .filter((content): content is string => typeof content === 'string');

  it('keeps two owner turns a minute apart identical up to the volatile tail, sharing at least 1,024 tokens', async () => {
    fake.openai.fallback = { text: ['Noted.'] };
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    // The automations mode: its prompt holds the Pulse blocks, stable status first and counters in the tail.
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'automations' })
      .expect(200);
    await client.send(chat.id, 'Good morning');
    t.clock.advance(60_000);
    await client.send(chat.id, 'What is on today?');

    const [first, second] = systemPrompts().slice(-2);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    // The minute moved on: the prompts differ, in the date and time only.
    expect(first).toContain('Monday, 23 November 2026 at 09:59');
    expect(second).toContain('Monday, 23 November 2026 at 10:00');
    const shared = commonPrefix(first, second);
    expect(shared.length).toBeLessThan(first.length);

    // Everything before the volatile tail (Pulse counters, then the date and time) is shared …
    const tail = first.indexOf('\n\n## Pulse Counters');
    expect(tail).toBeGreaterThan(0);
    expect(first.indexOf('\n\n## Current Date & Time')).toBeGreaterThan(tail);
    expect(shared.length).toBeGreaterThanOrEqual(tail);
    expect(first.slice(tail)).not.toMatch(
      /## (Your Memory|Your Database|Available Tools|Pulse Status)\n/,
    );
    // … and with the tools (sent before the messages, so part of the cached prefix) that is long enough to cache.
    const tools = JSON.stringify(fake.openai.requests.at(-1)?.body.tools);
    expect(JSON.stringify(fake.openai.requests.at(-2)?.body.tools)).toBe(tools);
    expect(encode(tools + shared).length).toBeGreaterThanOrEqual(
      CACHEABLE_PREFIX_TOKENS,
    );
  });

  it('after a mode switch, keeps the next turns of the new mode identical up to the volatile tail', async () => {
    fake.openai.fallback = { text: ['Noted.'] };
    const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
    await client.send(chat.id, 'Hello');
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'data' })
      .expect(200);
    await client.send(chat.id, 'Find my contacts');
    t.clock.advance(60_000);
    await client.send(chat.id, 'And my schedule');
    const [before, first, second] = systemPrompts().slice(-3);
    expect(before).not.toContain('## Your Database');
    expect(first).toContain('## Your Database');
    const tail = first.indexOf('\n\n## Current Date & Time');
    expect(commonPrefix(first, second).length).toBeGreaterThanOrEqual(tail);
    const tools = JSON.stringify(fake.openai.requests.at(-1)?.body.tools);
    expect(JSON.stringify(fake.openai.requests.at(-2)?.body.tools)).toBe(tools);
    expect(
      encode(tools + commonPrefix(first, second)).length,
    ).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_TOKENS);
  });
});
