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
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import type { AiToolContext } from '../src/ai-tools/ai-tool';
import { ChatsService } from '../src/chats/chats.service';
import { CombinedPromptBuilder } from '../src/system-instruction/combined-prompt.builder';
import { AppEventBus } from '../src/events/app-event-bus';
import { MemoryEmbeddings } from '../src/memory/embeddings/memory-embeddings';
import { MemoryIndex } from '../src/memory/memory-index';
import { SettingsService } from '../src/settings/settings.service';
import { WhatsAppPermissionsService } from '../src/whatsapp/permissions/whatsapp-permissions.service';
import { createTestApp, type TestApp } from './support/test-app';

const OPENAI_KEY = 'sk-embed-test-0123456789abcdefghij';
const GEMINI_KEY = 'AIzaSyEmbedTest0123456789abcdefghijk';
const NO_CAPS = { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null };
/** Asked in other words than the message it should find: no word in common. */
const PARAPHRASE = 'Which city is our home now?';

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
    const _id = new Types.ObjectId();
    await db.collection('messages').insertOne({
      _id,
      chatId: new Types.ObjectId(chatId),
      status: 'complete',
      error: null,
      model: null,
      usage: null,
      createdAt: at,
      updatedAt: at,
      ...fields,
    });
    ids[key] = _id.toHexString();
    return ids[key];
  }

  async function call(
    name: string,
    args: unknown,
  ): Promise<Record<string, unknown>> {
    const context: AiToolContext = {
      source: 'chat',
      settings: await t.app.get(SettingsService).get(),
      chatId: ownerChat,
      messageId: ids['reply'],
      signal: new AbortController().signal,
    };
    return JSON.parse(
      await t.app.get(AiToolRegistry).execute(name, args, context),
    ) as Record<string, unknown>;
  }

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
    for (let i = 0; i < 100; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('condition not met in 5 s');
  }

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
      env: { MEMORY_EMBEDDINGS: 'auto', MEMORY_EMBEDDING_TIMEOUT_MS: '500' },
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
    const prompt = async (userMessage: string) =>
      (await t.app.get(CombinedPromptBuilder).buildCombinedPrompt({
        source: 'chat',
        mode: 'default',
        userMessage,
      })) ?? '';
    // Messages have vectors, no note has one: recall (notes only) asks the provider nothing.
    expect(embeddings.status().vectors).toBeGreaterThan(0);
    const idle = fake.openaiEmbeddings.requests.length;
    await prompt('When is the instrument class?');
    expect(fake.openaiEmbeddings.requests).toHaveLength(idle);
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
      fake.openaiEmbeddings.fallback = { delayMs: 5_000 };
      const started = Date.now();
      const slow = await prompt('Remind me about the cello lessons');
      expect(Date.now() - started).toBeLessThan(2_000);
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
    // Notes only: a message near in meaning (Eve's move, readable in search) is never recalled.
    const moved = await prompt('Which city do people relocate to?');
    expect(moved).not.toContain('Porto');
    expect(moved).not.toContain('Lisbon');
    await call('forget', { id: noteId });
    const afterForget = fake.openaiEmbeddings.requests.length;
    expect(await prompt(paraphrase)).not.toContain('cello lessons');
    // The last note's vector gone: no query embedding again.
    expect(fake.openaiEmbeddings.requests).toHaveLength(afterForget);
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
    fake.openaiEmbeddings.fallback = { delayMs: 5_000 };
    const started = Date.now();
    const slow = await search('Lisbon town');
    expect(Date.now() - started).toBeLessThan(3_000);
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
    const usage = (await owner.get('/api/usage').expect(200))
      .body as UsageReport;
    expect(usage.byModel.map((m) => m.model)).toEqual(
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
