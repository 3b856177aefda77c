import type { MemorySearchResult, UsageReport } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../tools/fake-llm/fake-llm-server';
import { ChatsService } from '../src/chats/chats.service';
import { AppEventBus } from '../src/events/app-event-bus';
import { MemoryEmbeddings } from '../src/memory/embeddings/memory-embeddings';
import { MemoryIndex } from '../src/memory/memory-index';
import { KnownSecrets } from '../src/secrets/known-secrets';
import { seedMessage } from './support/message-doc';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

const OPENAI_KEY = 'sk-embed-test-0123456789abcdefghij';
const NO_CAPS = { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null };
/** Told in a chat before the owner saved it as an auth profile's value (no credential shape). */
const PROFILE_VALUE = 'Wq8zTx3vLm2pRtK7';
/** Told before it became an API key setting (Brave's key: not one the embeddings use). */
const BRAVE_KEY = 'Bv5nQy8rHs2kDf6J';
/** Became an MCP server's OAuth token (known through `KnownSecrets.contribute`, announced as a status change). */
const MCP_TOKEN = 'Mc4pTk9wZr3nYb7H';

interface StoredVector {
  _id: string;
  hash: number;
  vector: { buffer: Buffer };
  at: Date;
}

/**
 * A secret saved after a text holding it was embedded: the vector made from that text is
 * replaced by one of the scrubbed text (only those documents, in the background, through the
 * real app, the real embedded database and the `openai` SDK against the fake's endpoint).
 */
describe('memory embeddings after a secret is saved', () => {
  let t: TestApp;
  let fake: FakeLlmServer;
  let owner: TestAgent;
  let db: Connection;
  let embeddings: MemoryEmbeddings;
  let chat: string;
  const ids: Record<string, string> = {};
  let saved: string | undefined;

  const call = (name: string, args: unknown) =>
    callTool(t.app, name, args, { chatId: chat });

  async function search(query: string): Promise<MemorySearchResult[]> {
    const out = await call('memory_search', { query, limit: 5 });
    if (!out['results']) throw new Error(String(out['error']));
    return out['results'] as MemorySearchResult[];
  }

  const stored = async (): Promise<Map<string, StoredVector>> =>
    new Map(
      (
        await db
          .collection<StoredVector>('memory_embeddings')
          .find({})
          .toArray()
      ).map((doc) => [doc._id, doc]),
    );

  /** Every text sent to the embedding endpoint from request `from` on. */
  const inputsFrom = (from: number): string[] =>
    fake.openaiEmbeddings.requests
      .slice(from)
      .flatMap((r) => (r.body as { input: string | string[] }).input);

  /** Input tokens counted as usage source `memory` (counted off the call's path: polled). */
  const memoryTokens = async (): Promise<number> =>
    (
      (await owner.get('/api/usage').expect(200)).body as UsageReport
    ).bySource.find((s) => s.source === 'memory')?.inputTokens ?? 0;

  async function tokensAbove(floor: number): Promise<number> {
    for (let i = 0; i < 100; i++) {
      const tokens = await memoryTokens();
      if (tokens > floor) return tokens;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no memory usage counted above ${floor} in 5 s`);
  }

  async function add(key: string, content: string): Promise<void> {
    ids[key] = await seedMessage(db, {
      chatId: chat,
      at: new Date('2026-10-01T10:00:00Z'),
      role: 'user',
      content,
    });
  }

  beforeAll(async () => {
    fake = await startFakeLlmServer();
    saved = process.env['OPENAI_BASE_URL'];
    process.env['OPENAI_BASE_URL'] = fake.openaiBaseUrl;
    t = await createTestApp({
      now: new Date('2026-11-01T09:00:00Z'),
      env: { MEMORY_EMBEDDINGS: 'auto', MEMORY_EMBEDDING_TIMEOUT_MS: '500' },
    });
    owner = await t.owner();
    db = t.app.get<Connection>(getConnectionToken());
    embeddings = t.app.get(MemoryEmbeddings);
    chat = (await t.app.get(ChatsService).create('Home')).id;
    await add('alarm', `The alarm code is ${PROFILE_VALUE}`);
    await add('brave', `Brave search key for later: ${BRAVE_KEY}`);
    await add('lisbon', 'We moved from Hamburg to Lisbon last spring.');
    await add('plumber', 'The plumber comes on Tuesday');
    await t.app.get(MemoryIndex).rebuild();
    // A note keeps what it was told while nothing in it was a known secret.
    const note = await call('remember', {
      text: `The storage unit opens with ${PROFILE_VALUE}`,
      source_message_ids: [ids['lisbon']],
    });
    expect(note).toMatchObject({ status: 'active' });
    ids['note'] = note['id'] as string;
    await owner
      .patch('/api/settings')
      .send({ openaiApiKey: OPENAI_KEY, budget: NO_CAPS })
      .expect(200);
    await embeddings.settle();
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
    if (saved === undefined) delete process.env['OPENAI_BASE_URL'];
    else process.env['OPENAI_BASE_URL'] = saved;
  });

  it('embedded the texts as they were while nothing in them was a known secret', async () => {
    expect([...(await stored()).keys()].sort()).toEqual(
      [
        `n:${ids['note']}`,
        ...['alarm', 'brave', 'lisbon', 'plumber'].map((k) => `m:${ids[k]}`),
      ].sort(),
    );
    expect(inputsFrom(0)).toContain(`The alarm code is ${PROFILE_VALUE}`);
  });

  it('a settings change that adds no secret re-embeds nothing', async () => {
    const calls = fake.openaiEmbeddings.requests.length;
    const before = await stored();
    await owner
      .patch('/api/settings')
      .send({ urlFetchAllowHosts: ['127.0.0.1:9'] })
      .expect(200);
    await embeddings.settle();
    expect(fake.openaiEmbeddings.requests).toHaveLength(calls);
    expect(await stored()).toEqual(before);
  });

  it.each([
    {
      what: 'an auth profile value',
      keys: ['m:alarm', 'n:note'],
      secret: PROFILE_VALUE,
      scrubbed: [
        'The alarm code is [redacted secret]',
        'The storage unit opens with [redacted secret]',
      ],
      patch: {
        authProfiles: [
          {
            id: 'home',
            urlPrefix: 'http://127.0.0.1:9/api/',
            header: 'Authorization',
            value: PROFILE_VALUE,
          },
        ],
      },
    },
    {
      what: 'an API key setting',
      keys: ['m:brave'],
      secret: BRAVE_KEY,
      scrubbed: ['Brave search key for later: [redacted secret]'],
      patch: { braveApiKey: BRAVE_KEY },
    },
  ])(
    'once $what is saved, the vector of the text holding it is replaced by one of the scrubbed text, and nothing else is embedded again',
    async ({ keys, secret, scrubbed, patch }) => {
      const before = await stored();
      const calls = fake.openaiEmbeddings.requests.length;
      const tokens = await tokensAbove(0);
      await owner.patch('/api/settings').send(patch).expect(200);
      await embeddings.settle();
      const after = await stored();
      const replaced = keys.map((k) => {
        const [kind, name] = k.split(':');
        return `${kind}:${ids[name]}`;
      });
      for (const id of replaced) {
        // Replaced: another text's hash and another vector, in the database and the table.
        expect(after.get(id)?.hash).not.toBe(before.get(id)?.hash);
        expect(after.get(id)?.vector.buffer).not.toEqual(
          before.get(id)?.vector.buffer,
        );
      }
      // Only those documents were sent again, scrubbed; the others kept their vectors untouched.
      expect(inputsFrom(calls).sort()).toEqual([...scrubbed].sort());
      expect(await tokensAbove(tokens)).toBeGreaterThan(tokens);
      for (const [other, doc] of before)
        if (!replaced.includes(other)) expect(after.get(other)).toEqual(doc);
      expect(embeddings.status().vectors).toBe(before.size);
      // The secret never reaches the provider again, not even as a search; searching it finds nothing.
      const searched = fake.openaiEmbeddings.requests.length;
      expect(await search(secret)).toEqual([]);
      expect(JSON.stringify(inputsFrom(calls))).not.toContain(secret);
      expect(fake.openaiEmbeddings.requests).toHaveLength(searched);
      // The scrubbed texts are still found by their other words.
      for (const [i, text] of scrubbed.entries()) {
        const words = text.split(' ').slice(1, 3).join(' ');
        expect((await search(words)).map((r) => r.id)).toContain(
          replaced[i].slice(2),
        );
      }
    },
  );

  it("a secret another module holds (an MCP server's token after a sign-in) is taken out of the index and the vectors too", async () => {
    await add('mcp', `The notes server answers to ${MCP_TOKEN} now`);
    await t.app.get(MemoryIndex).rebuild();
    await embeddings.settle();
    const id = `m:${ids['mcp']}`;
    const before = await stored();
    expect(before.has(id)).toBe(true);
    expect((await search(MCP_TOKEN)).map((r) => r.id)).toContain(ids['mcp']);
    const calls = fake.openaiEmbeddings.requests.length;
    let tokens: string[] = [];
    t.app.get(KnownSecrets).contribute(() => tokens);
    tokens = [MCP_TOKEN];
    t.app.get(AppEventBus).emit('mcp.changed', {
      id: 'server',
      name: 'notes',
      change: 'status',
      state: 'ready',
      at: new Date().toISOString(),
    });
    await embeddings.settle();
    expect(inputsFrom(calls)).toEqual([
      'The notes server answers to [redacted secret] now',
    ]);
    const after = await stored();
    expect(after.get(id)?.hash).not.toBe(before.get(id)?.hash);
    for (const [other, doc] of before)
      if (other !== id) expect(after.get(other)).toEqual(doc);
    expect(await search(MCP_TOKEN)).toEqual([]);
  });

  it('checks again at a start without a record of the check: a vector of a text holding a secret, left by a crash, is replaced', async () => {
    // What a crash leaves: a vector made from a secret's text, its check not recorded.
    await add('late', `The gate opens with ${PROFILE_VALUE} twice`);
    await t.app.get(MemoryIndex).rebuild();
    const id = `m:${ids['late']}`;
    const lisbon = (await stored()).get(`m:${ids['lisbon']}`) as StoredVector;
    await db
      .collection<StoredVector>('memory_embeddings')
      .insertOne({ ...lisbon, _id: id, hash: 12345 });
    // With the check recorded for these secrets, a start reads no text again (and trusts the record).
    const calls = fake.openaiEmbeddings.requests.length;
    embeddings.onRestored();
    await embeddings.settle();
    expect(inputsFrom(calls)).toEqual([]);
    expect((await stored()).get(id)?.hash).toBe(12345);
    // No record (a crash before it was written, a first start after an upgrade): every vector checked.
    const before = await stored();
    await db
      .collection<{ _id: string }>('memory_index')
      .deleteOne({ _id: 'embeddings-secrets' });
    embeddings.onRestored();
    await embeddings.settle();
    expect(inputsFrom(calls)).toEqual([
      'The gate opens with [redacted secret] twice',
    ]);
    const after = await stored();
    expect(after.get(id)?.hash).not.toBe(12345);
    for (const [other, doc] of before)
      if (other !== id) expect(after.get(other)).toEqual(doc);
    expect(
      await db
        .collection('memory_index')
        .countDocuments({ _id: 'embeddings-secrets' } as never),
    ).toBe(1);
  });
});
