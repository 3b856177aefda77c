import type {
  MemorySearchResult,
  UsageReport,
  WhatsAppPermission,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../tools/fake-llm/fake-llm-server';
import { ChatReplyService } from '../src/chats/chat-reply.service';
import { ChatsService } from '../src/chats/chats.service';
import { CombinedPromptBuilder } from '../src/system-instruction/combined-prompt.builder';
import { AppEventBus } from '../src/events/app-event-bus';
import { MemoryEmbeddings } from '../src/memory/embeddings/memory-embeddings';
import { MemoryIndex } from '../src/memory/memory-index';
import { MemoryService } from '../src/memory/memory.service';
import { WhatsAppPermissionsService } from '../src/whatsapp/permissions/whatsapp-permissions.service';
import { chatClient } from './support/llm-test-kit';
import { seedMessage } from './support/message-doc';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

const OPENAI_KEY = 'sk-embed-test-0123456789abcdefghij';
const GEMINI_KEY = 'AIzaSyEmbedTest0123456789abcdefghijk';
const NO_CAPS = { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null };
/** Asked in other words than the message it should find: no word in common. */
const PARAPHRASE = 'Which city is our home now?';
/**
 * A search's and a turn's wait for the query's embedding. Longer than the defaults (1.5 s and
 * 300 ms) so that a busy machine (a full suite, CI) cannot turn a 250 ms fake provider into a
 * miss; a slow provider is one far slower still (5 s).
 */
const QUERY_WAIT_MS = 1_500;
const RECALL_WAIT_MS = 1_500;
const SLOW_PROVIDER = { delayMs: 5_000 };

/**
 * The vector half of memory search on the real app and embedded database, with the real
 * `openai` and `@google/genai` SDKs against the fake's embedding endpoints.
 */
describe('memory embeddings (background vectors, hybrid search, forget)', () => {
  let t: TestApp;
  let fake: FakeLlmServer;
  let owner: TestAgent;
  let db: Connection;
  let embeddings: MemoryEmbeddings;
  let ownerChat: string;
  let contactChat: string;
  let strangerChat: string;
  const ids: Record<string, string> = {};
  const saved: Record<string, string | undefined> = {};
  const start = new Date('2026-03-10T10:00:00Z');

  async function addMessage(
    chatId: string,
    key: string,
    fields: Record<string, unknown>,
    at = start,
  ): Promise<string> {
    ids[key] = await seedMessage(db, { chatId, at, ...fields });
    return ids[key];
  }

  const call = (name: string, args: unknown) =>
    callTool(t.app, name, args, {
      chatId: ownerChat,
      messageId: ids['reply'],
    });

  async function search(query: string): Promise<MemorySearchResult[]> {
    const out = await call('memory_search', { query, limit: 5 });
    if (!out['results']) throw new Error(String(out['error']));
    return out['results'] as MemorySearchResult[];
  }

  const stored = () =>
    db
      .collection<{
        _id: string;
        model: string;
        dims: number;
        vector: { buffer: Buffer };
      }>('memory_embeddings')
      .find({})
      .toArray();

  const sentTexts = (): string =>
    JSON.stringify([
      ...fake.openaiEmbeddings.requests.map((r) => r.body),
      ...fake.geminiEmbeddings.requests.map((r) => r.body),
    ]);

  async function until<T>(
    read: () => Promise<T>,
    done: (value: T) => boolean,
  ): Promise<T> {
    for (let i = 0; i < 300; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('condition not met in 15 s');
  }

  /** The owner's prompt for a message, as a chat turn builds it (recall included). */
  const prompt = async (userMessage: string): Promise<string> =>
    (await t.app.get(CombinedPromptBuilder).buildCombinedPrompt({
      source: 'chat',
      mode: 'default',
      userMessage,
    })) ?? '';

  /** Milliseconds `work` took (a figure printed for the report, not a timed assertion). */
  async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
    const started = performance.now();
    const value = await work();
    return [value, Math.round(performance.now() - started)];
  }

  const figures: string[] = [];

  const memoryUsage = async () => {
    const usage = (await owner.get('/api/usage').expect(200))
      .body as UsageReport;
    return usage.bySource.find((s) => s.source === 'memory');
  };

  /** A message written the way a turn's end announces it (the index and embeddings follow). */
  async function announce(chatId: string, key: string, content: string) {
    await addMessage(chatId, key, { role: 'user', content }, new Date());
    t.app.get(AppEventBus).emit('chats.changed', {
      chatId,
      change: 'reply-ended',
      messageIds: [ids[key]],
      at: new Date().toISOString(),
    });
    await until(
      async () => (await search(content)).map((r) => r.id),
      (found) => found.includes(ids[key]),
    );
  }

  beforeAll(async () => {
    fake = await startFakeLlmServer();
    saved['openai'] = process.env['OPENAI_BASE_URL'];
    saved['gemini'] = process.env['GOOGLE_GEMINI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.openaiBaseUrl;
    process.env['GOOGLE_GEMINI_BASE_URL'] = fake.geminiBaseUrl;
    t = await createTestApp({
      now: new Date('2026-11-01T09:00:00Z'),
      env: {
        MEMORY_EMBEDDINGS: 'auto',
        MEMORY_EMBEDDING_TIMEOUT_MS: String(QUERY_WAIT_MS),
        MEMORY_RECALL_WAIT_MS: String(RECALL_WAIT_MS),
      },
    });
    owner = await t.owner();
    db = t.app.get<Connection>(getConnectionToken());
    embeddings = t.app.get(MemoryEmbeddings);
    const chats = t.app.get(ChatsService);
    ownerChat = (await chats.create('Family')).id;
    contactChat = (await chats.create('WhatsApp: Eve', 'whatsapp')).id;
    strangerChat = (await chats.create('WhatsApp: Mallory', 'whatsapp')).id;
    await addMessage(ownerChat, 'moved', {
      role: 'user',
      content: 'We moved from Hamburg to Lisbon last spring.',
    });
    await addMessage(ownerChat, 'reply', {
      role: 'assistant',
      content: 'Noted: Lisbon it is.',
      parts: [],
    });
    await addMessage(ownerChat, 'secret', {
      role: 'user',
      content: `Keep this safe: my API key is ${OPENAI_KEY} and the garden gate code`,
    });
    const contact = (name: string, phone: string) => ({
      kind: 'contact',
      channel: 'whatsapp',
      name,
      phone,
    });
    await addMessage(contactChat, 'eve', {
      role: 'user',
      author: contact('Eve', '15550001111'),
      content: 'Eve here: I relocated to Porto in May',
    });
    await addMessage(strangerChat, 'mallory', {
      role: 'user',
      author: contact('Mallory', '15550002222'),
      content: 'Mallory: I live in the castle, send your card number',
    });
    const eve = (
      await owner
        .post('/api/whatsapp/permissions')
        .send({ phoneNumber: '15550001111', displayName: 'Eve', canRead: true })
        .expect(200)
    ).body as WhatsAppPermission;
    await t.app
      .get(WhatsAppPermissionsService)
      .setChatId(eve.phoneNumber, contactChat);
    await t.app.get(MemoryIndex).rebuild();
  });

  afterAll(async () => {
    if (figures.length)
      process.stdout.write(
        `\nRecall prompt-build figures (fake provider):\n  ${figures.join('\n  ')}\n`,
      );
    await t?.close();
    await fake?.close();
    for (const [name, env] of [
      ['openai', 'OPENAI_BASE_URL'],
      ['gemini', 'GOOGLE_GEMINI_BASE_URL'],
    ] as const)
      if (saved[name] === undefined) delete process.env[env];
      else process.env[env] = saved[name];
  });

  it('without an embedding provider, search is by keywords only and still answers', async () => {
    await embeddings.settle();
    expect(embeddings.status()).toMatchObject({ model: null, vectors: 0 });
    expect((await search(PARAPHRASE)).map((r) => r.id)).not.toContain(
      ids['moved'],
    );
    expect((await search('Lisbon')).map((r) => r.id)).toContain(ids['moved']);
    expect(fake.openaiEmbeddings.requests).toHaveLength(0);
    expect(await stored()).toHaveLength(0);
  });

  it('with an OpenAI key, embeds the visible notes and messages in the background, counted as usage source memory', async () => {
    await owner
      .patch('/api/settings')
      .send({ openaiApiKey: OPENAI_KEY, budget: NO_CAPS })
      .expect(200);
    await embeddings.settle();
    // The owner's three messages and Eve's (readable); never the stranger's.
    const docs = await stored();
    expect(docs.map((d) => d._id).sort()).toEqual(
      ['moved', 'reply', 'secret', 'eve'].map((k) => `m:${ids[k]}`).sort(),
    );
    for (const doc of docs) {
      expect(doc).toMatchObject({ model: 'text-embedding-3-small', dims: 256 });
      expect(doc.vector.buffer.length).toBe(256 * 4);
    }
    expect(embeddings.status()).toMatchObject({
      model: 'openai/text-embedding-3-small',
      vectors: 4,
      paused: null,
    });
    const [first] = fake.openaiEmbeddings.requests;
    expect(first.path).toBe('/v1/embeddings');
    expect(first.apiKey).toBe(OPENAI_KEY);
    expect(first.body).toMatchObject({
      model: 'text-embedding-3-small',
      dimensions: 256,
    });
    const usage = await until(memoryUsage, (u) => (u?.inputTokens ?? 0) > 0);
    expect(usage?.costUsd).toBeGreaterThan(0);
  });

  it('asks no embedding for recall while no note has a vector (messages have some), so the prompt never waits for one', async () => {
    expect(embeddings.status().vectors).toBeGreaterThan(0);
    expect(embeddings.hasNoteVectors()).toBe(false);
    const before = fake.openaiEmbeddings.requests.length;
    try {
      fake.openaiEmbeddings.fallback = { delayMs: 250 };
      const [built, ms] = await timed(() =>
        prompt('When is the instrument class?'),
      );
      expect(built).not.toContain('## Recalled Notes');
      figures.push(`no notes, 250 ms provider: prompt built in ${ms} ms`);
    } finally {
      fake.openaiEmbeddings.fallback = {};
    }
    expect(fake.openaiEmbeddings.requests).toHaveLength(before);
  });

  it("never sends a secret or a stranger's words to the embedding endpoint", () => {
    const sent = sentTexts();
    expect(sent).toContain('Lisbon');
    expect(sent).toContain('Porto');
    expect(sent).toContain('garden gate code');
    expect(sent).not.toContain(OPENAI_KEY);
    expect(sent).not.toContain('castle');
  });

  it('finds by meaning what keyword search misses (one query embedding, cached when repeated)', async () => {
    const before = fake.openaiEmbeddings.requests.length;
    const results = await search(PARAPHRASE);
    // Eve's "relocated" is as near; both are found, the stranger's "live" never.
    expect(results.slice(0, 2).map((r) => r.id)).toContain(ids['moved']);
    expect(results.map((r) => r.id)).not.toContain(ids['mallory']);
    expect(fake.openaiEmbeddings.requests).toHaveLength(before + 1);
    expect(fake.openaiEmbeddings.requests[before].body.input).toEqual([
      PARAPHRASE,
    ]);
    await search(PARAPHRASE);
    expect(fake.openaiEmbeddings.requests).toHaveLength(before + 1);
  });

  it('embeds new writes as they come, and forget removes the vector and the hit at once', async () => {
    const out = await call('remember', {
      text: 'Our family doctor is Dr Weber',
      source_message_ids: [ids['moved']],
    });
    expect(out).toMatchObject({ status: 'active' });
    const noteId = out['id'] as string;
    await embeddings.settle();
    expect((await stored()).map((d) => d._id)).toContain(`n:${noteId}`);
    const asked = 'Who is our physician?';
    expect((await search(asked)).map((r) => r.id)).toContain(noteId);
    const vectors = embeddings.status().vectors;

    expect(await call('forget', { id: noteId })).toMatchObject({
      success: true,
    });
    // No waiting: gone from the database and the table when forget answers.
    expect((await stored()).map((d) => d._id)).not.toContain(`n:${noteId}`);
    expect(embeddings.status().vectors).toBe(vectors - 1);
    expect((await search(asked)).map((r) => r.id)).not.toContain(noteId);
  });

  it("recalls into an owner's prompt, by meaning, a note keyword recall misses; a failing or slow provider leaves keyword recall and does not hold the turn", async () => {
    const out = await call('remember', {
      text: 'The cello lessons are on Sundays',
      source_message_ids: [ids['moved']],
    });
    const noteId = out['id'] as string;
    await embeddings.settle();
    const paraphrase = 'When is the instrument class?';
    try {
      // Keywords alone miss it (no word in common), and still recall what shares words.
      fake.openaiEmbeddings.fallback = { status: 500, message: 'down' };
      expect(await prompt(paraphrase)).not.toContain('cello lessons');
      expect(await prompt('Are the cello lessons still on?')).toContain(
        'The cello lessons are on Sundays',
      );
      // A provider slower than the turn's wait: keyword recall, without waiting for it.
      fake.openaiEmbeddings.fallback = SLOW_PROVIDER;
      const started = Date.now();
      const slow = await prompt('Remind me about the cello lessons');
      expect(Date.now() - started).toBeLessThan(SLOW_PROVIDER.delayMs - 1_000);
      expect(slow).toContain('The cello lessons are on Sundays');
    } finally {
      fake.openaiEmbeddings.fallback = {};
    }
    const before = fake.openaiEmbeddings.requests.length;
    const recalled = await prompt(paraphrase);
    expect(recalled).toContain('## Recalled Notes');
    expect(recalled).toContain('The cello lessons are on Sundays');
    expect(fake.openaiEmbeddings.requests.slice(before)).toHaveLength(1);
    expect(fake.openaiEmbeddings.requests[before].body.input).toEqual([
      paraphrase,
    ]);
    // The same words again (a regenerate): the cached vector, no second call.
    expect(await prompt(paraphrase)).toContain(
      'The cello lessons are on Sundays',
    );
    // No meaning of their own (small talk, a number, one content word): no call, keyword recall.
    for (const message of ['ok thanks!', 'Yes please', '42', '👍', 'hi there'])
      expect(await prompt(message)).not.toContain('## Recalled Notes');
    expect(await prompt('cello?')).toContain(
      'The cello lessons are on Sundays',
    );
    expect(fake.openaiEmbeddings.requests.slice(before)).toHaveLength(1);
    // The wait counts from the message's acceptance (prepareRecall), not from the prompt's build.
    const memory = t.app.get(MemoryService);
    const sleep = (ms: number) =>
      new Promise((resolve) => setTimeout(resolve, ms));
    try {
      fake.openaiEmbeddings.fallback = { delayMs: 250 };
      const [late, lateMs] = await timed(() =>
        prompt('When does the instrument class happen?'),
      );
      expect(late).toContain('The cello lessons are on Sundays');
      figures.push(
        `notes with vectors, 250 ms provider, embedding asked at the prompt's build: prompt built in ${lateMs} ms`,
      );
      const early = 'What day is the instrument class?';
      memory.prepareRecall(early);
      await sleep(100); // the turn's own work before its prompt (history, attachments, settings)
      const [recalled, earlyMs] = await timed(() => prompt(early));
      expect(recalled).toContain('The cello lessons are on Sundays');
      figures.push(
        `notes with vectors, 250 ms provider, embedding asked at acceptance, prompt 100 ms later: prompt built in ${earlyMs} ms`,
      );
      // A 5 s provider whose wait ran out while the turn did its other work: no wait left.
      fake.openaiEmbeddings.fallback = SLOW_PROVIDER;
      const gone = 'Who teaches the instrument class?';
      memory.prepareRecall(gone);
      await sleep(RECALL_WAIT_MS + 100);
      const [, goneMs] = await timed(() => prompt(gone));
      expect(goneMs).toBeLessThan(RECALL_WAIT_MS);
      figures.push(
        `5 s provider, asked at acceptance ${RECALL_WAIT_MS + 100} ms before the prompt (wait ${RECALL_WAIT_MS} ms): prompt built in ${goneMs} ms`,
      );
    } finally {
      fake.openaiEmbeddings.fallback = {};
    }
    // Notes only: a message near in meaning (Eve's move, readable in search) is never recalled.
    const moved = await prompt('Which city do people relocate to?');
    expect(moved).not.toContain('Porto');
    expect(moved).not.toContain('Lisbon');
    await call('forget', { id: noteId });
    expect(await prompt(paraphrase)).not.toContain('cello lessons');
  });

  it('asks no embedding when the keyword hits already fill the recall with strong hits', async () => {
    const schedule = (part: number) =>
      `The cello lessons schedule, part ${part}: ` +
      'Mondays and Thursdays at the music school with Ms Ito; bring the rosin, the folder and the tuner. '.repeat(
        8,
      );
    const notes = [];
    for (const part of [1, 2])
      notes.push(
        (
          await call('remember', {
            text: schedule(part),
            source_message_ids: [ids['moved']],
          })
        )['id'] as string,
      );
    await embeddings.settle();
    expect(embeddings.hasNoteVectors()).toBe(true);
    const before = fake.openaiEmbeddings.requests.length;
    // Both notes match every content word and the first already takes most of the 400 tokens.
    const full = await prompt('What is the cello lessons schedule?');
    expect(full).toContain('The cello lessons schedule, part');
    expect(fake.openaiEmbeddings.requests).toHaveLength(before);
    // Hits that match one word of four are weak: the meaning is asked (once).
    await prompt('cello teacher phone number');
    expect(fake.openaiEmbeddings.requests).toHaveLength(before + 1);
    for (const id of notes) await call('forget', { id });
  });

  it("an owner's chat turn asks for its message's embedding when the message is accepted, before the prompt is built, once", async () => {
    const noteId = (
      await call('remember', {
        text: 'The cello lessons are on Sundays',
        source_message_ids: [ids['moved']],
      })
    )['id'] as string;
    await embeddings.settle();
    await owner
      .patch('/api/settings')
      .send({ primaryModel: 'gpt-4.1-mini', alwaysConfirm: false })
      .expect(200);
    const chat = (await t.app.get(ChatsService).create('Music')).id;
    let modelRequest = '';
    const answer = (request: { body: unknown }) => {
      modelRequest = JSON.stringify(request.body);
      return { text: ['On Sundays.'] };
    };
    // The real turn: prepare() accepts the message; its prompt is built only when run() starts.
    fake.openaiEmbeddings.fallback = { delayMs: 100 };
    fake.openai.enqueue(answer);
    const before = fake.openaiEmbeddings.requests.length;
    const prepared = await t.app
      .get(ChatReplyService)
      .prepare(chat, 'When is my instrument class?');
    await until(
      async () => fake.openaiEmbeddings.requests.length,
      (n) => n > before,
    );
    const reply = await prepared.run();
    fake.openaiEmbeddings.fallback = {};
    expect(reply.status).toBe('complete');
    expect(modelRequest).toContain('The cello lessons are on Sundays');
    // One call for the turn (its messages are embedded later, in the background).
    expect(fake.openaiEmbeddings.requests.slice(before)).toHaveLength(1);

    // Over HTTP with a 250 ms provider: when the embedding is asked and the model called.
    const client = await chatClient(t);
    let embeddingAt = 0;
    let modelAt = 0;
    fake.openaiEmbeddings.enqueue(() => {
      embeddingAt = performance.now();
      return { delayMs: 250 };
    });
    fake.openai.enqueue((request) => {
      modelAt = performance.now();
      return answer(request);
    });
    const sent = performance.now();
    await client.send(chat, 'Is the instrument class at the music school?');
    expect(embeddingAt).toBeGreaterThan(0);
    expect(modelAt).toBeGreaterThan(embeddingAt);
    figures.push(
      `a chat turn over HTTP, 250 ms provider: embedding asked ${Math.round(embeddingAt - sent)} ms and the model called ${Math.round(modelAt - sent)} ms after the POST`,
    );
    const turn = await db
      .collection('messages')
      .find({ chatId: new Types.ObjectId(chat) })
      .toArray();
    await call('forget', { id: noteId });
    await owner.delete(`/api/chats/${chat}`).expect(204);
    const gone = [`n:${noteId}`, ...turn.map((m) => `m:${String(m._id)}`)];
    await embeddings.settle();
    await until(
      async () => (await stored()).map((d) => d._id),
      (keys) => !keys.some((key) => gone.includes(key)),
    );
  });

  it("stores a new message's vector once, and an edited message's vector in place of the old one", async () => {
    const chat = (await t.app.get(ChatsService).create('Garden')).id;
    await announce(chat, 'garden', 'The tomatoes need staking this week');
    await embeddings.settle();
    const key = `m:${ids['garden']}`;
    const before = (await stored()).find((d) => d._id === key) as unknown as {
      hash: number;
    };
    expect(before).toBeDefined();
    const count = (await stored()).length;

    await db
      .collection('messages')
      .updateOne(
        { _id: new Types.ObjectId(ids['garden']) },
        { $set: { content: 'The courgettes need watering every evening' } },
      );
    t.app.get(AppEventBus).emit('chats.changed', {
      chatId: chat,
      change: 'reply-ended',
      messageIds: [ids['garden']],
      at: new Date().toISOString(),
    });
    const after = await until(
      async () =>
        (await stored()).find((d) => d._id === key) as unknown as {
          hash: number;
        },
      (doc) => doc.hash !== before.hash,
    );
    expect(after.hash).not.toBe(before.hash);
    expect(await stored()).toHaveLength(count);
    expect((await search('courgettes watering')).map((r) => r.id)).toContain(
      ids['garden'],
    );
    await owner.delete(`/api/chats/${chat}`).expect(204);
    await until(stored, (docs) => docs.length === count - 1);
  });

  it("drops a deleted chat's vectors", async () => {
    const chat = (await t.app.get(ChatsService).create('Errands')).id;
    await announce(chat, 'errand', 'Buy a new bicycle bell');
    await embeddings.settle();
    expect((await stored()).map((d) => d._id)).toContain(`m:${ids['errand']}`);
    await owner.delete(`/api/chats/${chat}`).expect(204);
    await until(
      async () => (await stored()).map((d) => d._id),
      (keys) => !keys.includes(`m:${ids['errand']}`),
    );
    expect((await search('bicycle bell')).map((r) => r.id)).not.toContain(
      ids['errand'],
    );
  });

  it('answers by keywords, with no error, when the provider fails or is too slow', async () => {
    fake.openaiEmbeddings.fallback = { status: 500, message: 'down' };
    const failed = await search('Lisbon city');
    expect(failed.map((r) => r.id)).toContain(ids['moved']);
    fake.openaiEmbeddings.fallback = SLOW_PROVIDER;
    const started = Date.now();
    const slow = await search('Lisbon town');
    expect(Date.now() - started).toBeLessThan(SLOW_PROVIDER.delayMs - 1_000);
    expect(slow.map((r) => r.id)).toContain(ids['moved']);
    fake.openaiEmbeddings.fallback = {};
  });

  it('pauses embedding when the budget refuses, and goes on when it allows', async () => {
    await owner
      .patch('/api/settings')
      .send({ budget: { ...NO_CAPS, unattendedDailyUsd: 0 } })
      .expect(200);
    const before = fake.openaiEmbeddings.requests.length;
    await announce(ownerChat, 'late', 'The plumber comes on Tuesday');
    await embeddings.settle();
    expect(embeddings.status().paused).toMatch(/^budget: /);
    expect(fake.openaiEmbeddings.requests).toHaveLength(before);
    expect((await stored()).map((d) => d._id)).not.toContain(
      `m:${ids['late']}`,
    );
    // The query's embedding is refused too: keyword search answers.
    expect((await search('plumber Tuesday')).map((r) => r.id)).toContain(
      ids['late'],
    );
    await owner.patch('/api/settings').send({ budget: NO_CAPS }).expect(200);
    await embeddings.settle();
    expect(embeddings.status().paused).toBeNull();
    expect((await stored()).map((d) => d._id)).toContain(`m:${ids['late']}`);
  });

  it('with a Gemini key instead, embeds everything again with Gemini and searches with it', async () => {
    await owner
      .patch('/api/settings')
      .send({ openaiApiKey: null, geminiApiKey: GEMINI_KEY })
      .expect(200);
    await embeddings.settle();
    expect(embeddings.status()).toMatchObject({
      model: 'gemini/gemini-embedding-001',
      vectors: 5,
    });
    const docs = await stored();
    expect(docs).toHaveLength(5);
    expect(docs.every((d) => d.model === 'gemini-embedding-001')).toBe(true);
    const batch = fake.geminiEmbeddings.requests.find((r) =>
      r.path.endsWith(':batchEmbedContents'),
    );
    expect(batch?.apiKey).toBe(GEMINI_KEY);
    expect(batch?.body.requests[0]).toMatchObject({
      outputDimensionality: 256,
      taskType: 'RETRIEVAL_DOCUMENT',
    });
    const results = await search(PARAPHRASE);
    expect(results.slice(0, 2).map((r) => r.id)).toContain(ids['moved']);
    expect(
      fake.geminiEmbeddings.requests.at(-1)?.body.requests[0],
    ).toMatchObject({ taskType: 'RETRIEVAL_QUERY' });
    expect(sentTexts()).not.toContain(OPENAI_KEY);
    expect(sentTexts()).not.toContain('castle');
    // Usage is counted off the call's path: the last call's may land just after it answered.
    const models = await until(
      async () =>
        (
          (await owner.get('/api/usage').expect(200)).body as UsageReport
        ).byModel.map((m) => m.model),
      (found) => found.includes('gemini-embedding-001'),
    );
    expect(models).toEqual(
      expect.arrayContaining([
        'text-embedding-3-small',
        'gemini-embedding-001',
      ]),
    );
  });

  it('reads the stored vectors again at a start (a restore) without embedding them again', async () => {
    const calls = fake.geminiEmbeddings.requests.length;
    embeddings.onRestored();
    expect(embeddings.status().vectors).toBe(0);
    await embeddings.settle();
    expect(embeddings.status()).toMatchObject({
      model: 'gemini/gemini-embedding-001',
      vectors: 5,
    });
    expect(fake.geminiEmbeddings.requests).toHaveLength(calls);
    const results = await search('Where is our home these days?');
    expect(results.slice(0, 2).map((r) => r.id)).toContain(ids['moved']);
  });
});
