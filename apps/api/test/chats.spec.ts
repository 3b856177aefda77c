import type {
  ChatMessage,
  ChatSummary,
  SystemInstruction,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  OPENAI_TEST_KEY,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { ChatReplyService } from '../src/chats/chat-reply.service';
import { MemoryIndex } from '../src/memory/memory-index';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

describe('chats', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({
      env: { LLM_MAX_TOOL_ROUNDS: '3', CHAT_HISTORY_LIMIT: '20' },
    });
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (title?: string): Promise<ChatSummary> =>
    (
      await owner
        .post('/api/chats')
        .send(title ? { title } : {})
        .expect(201)
    ).body;
  const messages = async (chatId: string): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;

  describe('REST', () => {
    it("puts a finished turn's message and reply in the memory index as stored, without reading them back", async () => {
      const chat = await newChat();
      const index = t.app.get(MemoryIndex);
      await index.whenReady();
      const collection = t.app
        .get<Connection>(getConnectionToken())
        .collection('messages');
      const findOne = jest.spyOn(
        Object.getPrototypeOf(collection) as typeof collection,
        'findOne',
      );
      try {
        fake.openai.enqueue({ text: ['The heron ', 'nests by the mill pond'] });
        await client.send(chat.id, 'Where does the kingfisher live?');
        await t.app.get(ChatReplyService).waitForIdle(chat.id);
        const search = (text: string) =>
          index.search({
            text,
            limit: 5,
            chatVisible: () => true,
            now: Date.parse('2030-01-01T00:00:00Z'),
          });
        const [asked, answered] = await messages(chat.id);
        expect((await search('kingfisher')).map((h) => h.id)).toEqual([
          asked.id,
        ]);
        expect((await search('heron mill pond')).map((h) => h.id)).toEqual([
          answered.id,
        ]);
        // The chat handed both over at the reply's end: no read of a message by its id.
        const readsOfMessages = findOne.mock.contexts.filter(
          (on) =>
            (on as { collectionName?: string }).collectionName === 'messages',
        );
        expect(readsOfMessages).toEqual([]);
      } finally {
        findOne.mockRestore();
      }
    });

    it('creates, lists newest first, renames and deletes chats with their messages', async () => {
      const first = await newChat();
      expect(first).toMatchObject({ title: 'New chat', running: false });
      t.clock.advance(1000);
      const second = await newChat('Trip planning');
      const list: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(list.map((c) => c.id).slice(0, 2)).toEqual([second.id, first.id]);

      const renamed = await owner
        .patch(`/api/chats/${first.id}`)
        .send({ title: '  Groceries ' })
        .expect(200);
      expect(renamed.body.title).toBe('Groceries');

      fake.openai.enqueue({ text: ['Hi'] });
      await client.send(first.id, 'hello');
      await owner.delete(`/api/chats/${first.id}`).expect(204);
      await owner.get(`/api/chats/${first.id}/messages`).expect(404);
      const connection = t.app.get<Connection>(getConnectionToken());
      expect(
        await connection
          .collection('messages')
          .countDocuments({ chatId: new Types.ObjectId(first.id) }),
      ).toBe(0);
    });

    it('refuses bad input with a clear 4xx and writes nothing', async () => {
      const chat = await newChat();
      const blank = await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ title: '   ' })
        .expect(400);
      expect(blank.body.message).toContain('title must not be blank');
      await owner
        .post('/api/chats')
        .send({ title: 'x'.repeat(201) })
        .expect(400);
      await owner
        .post('/api/chats')
        .send({ title: 'ok', extra: 1 })
        .expect(400);
      const empty = await owner
        .post(`/api/chats/${chat.id}/messages`)
        .send({ content: '  ' })
        .expect(400);
      expect(empty.body.message).toContain('content must not be blank');
      await owner.post(`/api/chats/${chat.id}/messages`).send({}).expect(400);
      await owner.get(`/api/chats/${chat.id}/messages?limit=0`).expect(400);
      await owner.get(`/api/chats/${chat.id}/messages?before=nope`).expect(400);
      await owner
        .post('/api/chats/64b7f0c2a1b2c3d4e5f60718/messages')
        .send({ content: 'hi' })
        .expect(404);
      await owner
        .patch('/api/chats/not-an-id')
        .send({ title: 'x' })
        .expect(404);
      expect(await messages(chat.id)).toEqual([]);
      expect(fake.openai.requests).toHaveLength(0);
    });

    it('needs a model before the first message, and stores nothing without one', async () => {
      const chat = await newChat();
      await owner
        .patch('/api/settings')
        .send({ primaryModel: null })
        .expect(200);
      const res = await owner
        .post(`/api/chats/${chat.id}/messages`)
        .send({ content: 'hello' })
        .expect(400);
      expect(res.body.message).toBe(
        'No model is configured: choose a primary model in Settings.',
      );
      await owner
        .patch('/api/settings')
        .send({ primaryModel: 'gemini-2.5-flash', geminiApiKey: null })
        .expect(200);
      const noKey = await owner
        .post(`/api/chats/${chat.id}/messages`)
        .send({ content: 'hello' })
        .expect(400);
      expect(noKey.body.message).toContain('No Gemini API key');
      expect(await messages(chat.id)).toEqual([]);
      await useModel(t, 'gpt-4.1-mini');
    });

    it('pages messages oldest first with a before cursor', async () => {
      const chat = await newChat();
      for (const word of ['one', 'two', 'three']) {
        fake.openai.enqueue({ text: [`re ${word}`] });
        await client.send(chat.id, word);
      }
      const all = await messages(chat.id);
      expect(all.map((m) => m.content)).toEqual([
        'one',
        're one',
        'two',
        're two',
        'three',
        're three',
      ]);
      const last2: ChatMessage[] = (
        await owner.get(`/api/chats/${chat.id}/messages?limit=2`).expect(200)
      ).body;
      expect(last2.map((m) => m.content)).toEqual(['three', 're three']);
      const before: ChatMessage[] = (
        await owner
          .get(`/api/chats/${chat.id}/messages?limit=2&before=${last2[0].id}`)
          .expect(200)
      ).body;
      expect(before.map((m) => m.content)).toEqual(['two', 're two']);
    });
  });

  describe('streaming a reply (OpenAI)', () => {
    it('streams text deltas, stores both messages, names the chat and reports usage', async () => {
      const chat = await newChat();
      fake.openai.enqueue({
        text: ['Hel', 'lo ', 'there'],
        usage: { promptTokens: 12, completionTokens: 3 },
      });
      const events = await client.send(chat.id, 'Say hello\nplease');
      expect(events.map((e) => e.event)).toEqual([
        'message',
        'delta',
        'delta',
        'delta',
        'done',
      ]);
      expect(events[0].data).toMatchObject({
        role: 'user',
        content: 'Say hello\nplease',
        status: 'complete',
      });
      expect(eventsNamed(events, 'delta')).toEqual([
        { text: 'Hel' },
        { text: 'lo ' },
        { text: 'there' },
      ]);
      const stored = await messages(chat.id);
      expect(stored[1]).toMatchObject({
        role: 'assistant',
        content: 'Hello there',
        status: 'complete',
        model: 'gpt-4.1-mini',
      });
      expect(eventsNamed(events, 'done')[0]).toEqual({
        messageId: stored[1].id,
        usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
      });
      const list: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(list.find((c) => c.id === chat.id)?.title).toBe('Say hello');

      const request = fake.openai.requests[0];
      expect(request.apiKey).toBe(OPENAI_TEST_KEY);
      expect(request.body.messages[0].role).toBe('system');
      expect(request.body.messages[0].content).toContain('## Your Memory');
      expect(request.body.messages.at(-1)).toEqual({
        role: 'user',
        content: 'Say hello\nplease',
      });
      expect(
        request.body.tools
          .map((tool: { function: { name: string } }) => tool.function.name)
          .sort(),
      ).toEqual([
        'forget',
        'memory_search',
        'remember',
        'save_memory',
        'set_mode',
      ]);
    });

    it('runs save_memory, shows the call and its result, and the memory reaches the instruction', async () => {
      const chat = await newChat();
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'call_mem',
              name: 'save_memory',
              arguments: { memory: '- Drinks green tea' },
            },
          ],
        },
        { text: ['Noted.'] },
      );
      const events = await client.send(chat.id, 'Remember I drink green tea');
      expect(events.map((e) => e.event)).toEqual([
        'message',
        'tool_call',
        'tool_result',
        'delta',
        'done',
      ]);
      expect(eventsNamed(events, 'tool_call')[0]).toEqual({
        id: 'call_mem',
        name: 'save_memory',
        arguments: { memory: '- Drinks green tea' },
      });
      const result = eventsNamed(events, 'tool_result')[0] as {
        result: string;
        durationMs: number;
      };
      expect(JSON.parse(result.result)).toEqual({
        success: true,
        message: 'Memory updated successfully',
      });
      expect(result.durationMs).toBeGreaterThanOrEqual(0);

      const instruction: SystemInstruction = (
        await owner.get('/api/system-instruction').expect(200)
      ).body;
      expect(instruction.memory).toBe('- Drinks green tea');
      const prompt = (
        await owner.get('/api/system-instruction/prompt').expect(200)
      ).body.prompt as string;
      expect(prompt).toContain('## Your Memory\n- Drinks green tea');

      // The model received the tool result in OpenAI's format.
      const followUp = fake.openai.requests[1].body.messages;
      expect(followUp.at(-2)).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: 'call_mem', function: { name: 'save_memory' } }],
      });
      expect(followUp.at(-1)).toMatchObject({
        role: 'tool',
        tool_call_id: 'call_mem',
      });

      const [, reply] = await messages(chat.id);
      expect(reply.parts).toEqual([
        expect.objectContaining({
          type: 'tool_call',
          id: 'call_mem',
          name: 'save_memory',
          error: null,
          result: expect.stringContaining('success'),
        }),
        { type: 'text', text: 'Noted.' },
      ]);

      // The next turn carries the earlier tool turn in its history.
      fake.openai.enqueue({ text: ['Yes.'] });
      await client.send(chat.id, 'Did you save it?');
      const history = fake.openai.requests[2].body.messages.map(
        (m: { role: string }) => m.role,
      );
      expect(history).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
        'assistant',
        'user',
      ]);
    });

    it('stores a reply whose tool arguments hold operator keys ($set) and gives them back intact', async () => {
      const chat = await newChat();
      const args = {
        operation: 'updateOne',
        collection: 'master',
        filter: {},
        update: { $set: { 'profile.city': 'Lyon' } },
        options: { upsert: true },
      };
      fake.openai.enqueue(
        { toolCalls: [{ id: 'call_set', name: 'db_query', arguments: args }] },
        { text: ['Saved.'] },
      );
      await client.send(chat.id, 'I live in Lyon');
      const [, reply] = await messages(chat.id);
      expect(reply.status).toBe('complete');
      expect(reply.parts?.[0]).toMatchObject({
        type: 'tool_call',
        name: 'db_query',
        arguments: args,
        error: null,
      });

      // And the stored call goes back to the model in the next turn's history.
      fake.openai.enqueue({ text: ['Lyon.'] });
      await client.send(chat.id, 'Where do I live?');
      const earlier = fake.openai.requests[2].body.messages.find(
        (m: { role: string }) => m.role === 'assistant',
      );
      expect(JSON.parse(earlier.tool_calls[0].function.arguments)).toEqual(
        args,
      );
    });

    it('gives a refused tool call back to the model as an error and carries on', async () => {
      const chat = await newChat();
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'c1',
              name: 'db_query',
              arguments: {
                operation: 'deleteMany',
                collection: 'chats',
                filter: {},
              },
            },
          ],
        },
        { text: ['I cannot do that.'] },
      );
      const events = await client.send(chat.id, 'Delete all chats');
      const result = eventsNamed(events, 'tool_result')[0] as {
        result: string;
        error: string;
      };
      expect(result.error).toMatch(
        /^Access denied: 'chats' is a protected core collection/,
      );
      expect(eventsNamed(events, 'done')).toHaveLength(1);
      expect(
        (await owner.get('/api/chats').expect(200)).body.length,
      ).toBeGreaterThan(0);
    });

    it('refuses a memory over 4,000 characters and an empty schema document, and writes neither', async () => {
      const chat = await newChat();
      const before: SystemInstruction = (
        await owner.get('/api/system-instruction').expect(200)
      ).body;
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: 'm',
              name: 'save_memory',
              arguments: { memory: 'x'.repeat(4001) },
            },
            { id: 's', name: 'update_db_schema', arguments: { schema: '   ' } },
            { id: 'n', name: 'save_memory', arguments: {} },
          ],
        },
        { text: ['Could not save.'] },
      );
      const events = await client.send(chat.id, 'Remember a lot');
      expect(
        eventsNamed(events, 'tool_result').map(
          (r) => (r as { error: string }).error,
        ),
      ).toEqual([
        'Memory is 4001 characters; the limit is 4000. Nothing was saved: shorten it and try again.',
        'The schema documentation must not be empty. Nothing was saved.',
        "Missing required argument 'memory'",
      ]);
      const after: SystemInstruction = (
        await owner.get('/api/system-instruction').expect(200)
      ).body;
      expect(after).toEqual(before);
    });

    it('turns provider errors into a readable error event and keeps the failed reply', async () => {
      const chat = await newChat();
      for (const [status, expected] of [
        [401, /API key was rejected/],
        [429, /rate limit/i],
        [500, /server error/i],
      ] as const) {
        // Every attempt gets it (a 429 or 5xx before any output is sent twice more).
        fake.openai.fallback = { status, message: 'upstream says no' };
        const events = await client.send(chat.id, `try ${status}`);
        const error = eventsNamed(events, 'error')[0] as {
          message: string;
          messageId: string | null;
        };
        expect(error.message).toMatch(expected);
        expect(error.message).not.toContain(OPENAI_TEST_KEY);
        expect(error.messageId).toEqual(expect.any(String));
      }
      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.role, m.status])).toEqual([
        ['user', 'complete'],
        ['assistant', 'error'],
        ['user', 'complete'],
        ['assistant', 'error'],
        ['user', 'complete'],
        ['assistant', 'error'],
      ]);
      expect(stored[1].error).toMatch(/API key was rejected/);
    });

    it('keeps the partial text when the stream is cut mid-reply', async () => {
      const chat = await newChat();
      fake.openai.enqueue({
        text: ['Partial ', 'answer ', 'never ends'],
        cutAfter: 2,
      });
      const events = await client.send(chat.id, 'Tell me');
      const error = eventsNamed(events, 'error')[0] as {
        message: string;
        messageId: string;
      };
      expect(error.messageId).toEqual(expect.any(String));
      const [, reply] = await messages(chat.id);
      expect(reply).toMatchObject({
        id: error.messageId,
        status: 'error',
        content: 'Partial answer ',
        error: error.message,
      });
    });

    it('resolves a run to the reply as stored, for callers that need no stream', async () => {
      const replies = t.app.get(ChatReplyService);
      const chat = await newChat();

      fake.openai.enqueue({
        text: ['Hello ', 'there'],
        usage: { promptTokens: 7, completionTokens: 2 },
      });
      const first = await replies.prepare(chat.id, 'Hi');
      const seen: string[] = [];
      const done = await first.run((event) => seen.push(event));
      expect(done).toMatchObject({
        messageId: first.assistantMessageId,
        status: 'complete',
        text: 'Hello there',
        parts: [{ type: 'text', text: 'Hello there' }],
        error: null,
      });
      expect(done.usage).toEqual({
        inputTokens: 7,
        outputTokens: 2,
        totalTokens: 9,
      });
      expect(seen[0]).toBe('message');
      expect(seen.at(-1)).toBe('done');

      fake.openai.enqueue({
        text: ['Partial ', 'answer ', 'never ends'],
        cutAfter: 2,
      });
      const cut = await (await replies.prepare(chat.id, 'More')).run();
      const stored = (await messages(chat.id)).at(-1);
      expect(cut).toMatchObject({
        messageId: stored?.id,
        status: 'error',
        text: 'Partial answer ',
        error: stored?.error,
      });
      expect(cut.error).toEqual(expect.any(String));

      fake.openai.enqueue({ status: 500, message: 'upstream says no' });
      const again = await replies.prepare(chat.id, 'Again');
      const failed = await again.run();
      expect(failed).toMatchObject({
        messageId: again.assistantMessageId,
        status: 'error',
        text: '',
        parts: [],
        usage: null,
      });
      expect(failed.error).toMatch(/server error/i);
      expect((await messages(chat.id)).map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
      ]);
    });

    it('ends a turn whose model loops on tools at the round cap, with a clear message', async () => {
      const chat = await newChat();
      fake.openai.fallback = {
        toolCalls: [
          {
            name: 'db_query',
            arguments: { operation: 'listCollections', collection: 'ai_x' },
          },
        ],
      };
      const events = await client.send(chat.id, 'Loop forever');
      expect(eventsNamed(events, 'tool_result')).toHaveLength(3);
      const error = eventsNamed(events, 'error')[0] as { message: string };
      expect(error.message).toContain('stopped after 3 rounds of tool calls');
      const [, reply] = await messages(chat.id);
      expect(reply.status).toBe('error');
      expect(reply.parts?.filter((p) => p.type === 'tool_call')).toHaveLength(
        3,
      );
    });

    it('stops a running reply on request and keeps what arrived', async () => {
      const chat = await newChat();
      fake.openai.enqueue({
        text: Array.from({ length: 50 }, (_, i) => `w${i} `),
        chunkDelayMs: 100,
      });
      const stream = await client.open(chat.id, 'Write a lot');
      await stream.next((e) => e.event === 'delta');
      const busy = await owner
        .post(`/api/chats/${chat.id}/messages`)
        .send({ content: 'again' })
        .expect(409);
      expect(busy.body.message).toContain('already running');
      const list: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(list.find((c) => c.id === chat.id)?.running).toBe(true);

      expect(
        (await owner.post(`/api/chats/${chat.id}/stop`).expect(200)).body,
      ).toEqual({ stopped: true });
      const rest = await stream.rest();
      expect(eventsNamed(rest, 'done')[0]).toMatchObject({ stopped: true });
      const [, reply] = await messages(chat.id);
      expect(reply.status).toBe('stopped');
      expect(reply.content).toMatch(/^w0 /);
      expect(reply.content.length).toBeLessThan(50 * 4);
      expect(
        (await owner.post(`/api/chats/${chat.id}/stop`).expect(200)).body,
      ).toEqual({ stopped: false });
    });

    it('sends the stream headers and the message event before the model says anything, and each event whole', async () => {
      const chat = await newChat();
      // The model opens its stream and then says nothing until the reply is stopped.
      fake.openai.enqueue({ text: ['never sent'], stallAfter: 0 });
      const stream = await client.open(chat.id, 'Anyone there?');
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toBe(
        'text/event-stream; charset=utf-8',
      );
      expect(stream.headers.get('cache-control')).toBe(
        'no-cache, no-transform',
      );
      expect(stream.headers.get('content-security-policy')).toContain(
        "default-src 'self'",
      );
      const first = await stream.next(undefined, 2000);
      expect(first.event).toBe('message');
      expect(first.data).toMatchObject({ content: 'Anyone there?' });

      await owner.post(`/api/chats/${chat.id}/stop`).expect(200);
      const rest = await stream.rest();
      expect(rest.map((e) => e.event)).toEqual(['done']);
      expect(rest[0].data).toMatchObject({ stopped: true });
    });

    it('offers no tools at all when memory is disabled', async () => {
      const chat = await newChat();
      await owner
        .patch('/api/system-instruction')
        .send({ memoryEnabled: false })
        .expect(200);
      fake.openai.enqueue({ text: ['Plain.'] });
      await client.send(chat.id, 'hi');
      expect(fake.openai.requests[0].body.tools).toBeUndefined();
      expect(fake.openai.requests[0].body.messages[0].content).not.toContain(
        '## Available Tools',
      );
      await owner
        .patch('/api/system-instruction')
        .send({ memoryEnabled: true })
        .expect(200);
    });
  });

  describe('streaming a reply (Gemini)', () => {
    beforeAll(() => useModel(t, 'gemini-2.5-flash'));
    afterAll(() => useModel(t, 'gpt-4.1-mini'));

    it('creates and documents an ai_ collection through several tool calls in one reply', async () => {
      const chat = await newChat();
      fake.gemini.enqueue(
        {
          toolCalls: [
            {
              name: 'db_query',
              arguments: {
                operation: 'insertOne',
                collection: 'ai_books',
                data: { title: 'Dune', status: 'to-read' },
              },
            },
            {
              name: 'update_db_schema',
              arguments: {
                schema:
                  '## ai_books\n| field | type |\n|---|---|\n| title | string |',
              },
            },
          ],
        },
        {
          toolCalls: [
            {
              name: 'db_query',
              arguments: {
                operation: 'find',
                collection: 'ai_books',
                filter: {},
              },
            },
          ],
        },
        { text: ['Added ', 'Dune.'] },
      );
      const events = await client.send(
        chat.id,
        'Track my reading list: add Dune',
      );
      expect(
        eventsNamed(events, 'tool_result').map(
          (r) => (r as { error: string | null }).error,
        ),
      ).toEqual([null, null, null]);
      // The first db_query call switches the new chat to the data mode, which holds it.
      expect(events.map((e) => e.event)).toEqual([
        'message',
        'tool_call',
        'mode',
        'tool_result',
        'tool_call',
        'tool_result',
        'tool_call',
        'tool_result',
        'delta',
        'delta',
        'done',
      ]);
      const connection = t.app.get<Connection>(getConnectionToken());
      expect(
        await connection
          .collection('ai_books')
          .find({}, { projection: { _id: 0 } })
          .toArray(),
      ).toEqual([{ title: 'Dune', status: 'to-read' }]);
      const instruction: SystemInstruction = (
        await owner.get('/api/system-instruction').expect(200)
      ).body;
      expect(instruction.dbSchema).toContain('## ai_books');

      // Function responses went back as objects (the find rows included).
      const third = fake.gemini.requests[2].body;
      const responses = third.contents
        .at(-1)
        .parts.map(
          (p: { functionResponse: { name: string; response: unknown } }) =>
            p.functionResponse,
        );
      expect(responses[0]).toMatchObject({
        name: 'db_query',
        response: { rows: [expect.objectContaining({ title: 'Dune' })] },
      });
      expect(
        fake.gemini.requests[0].body.systemInstruction.parts[0].text,
      ).toContain('## Available Tools');
    });

    it('reports a rejected Gemini key in words', async () => {
      const chat = await newChat();
      fake.gemini.enqueue({ status: 401, message: 'API key not valid' });
      const events = await client.send(chat.id, 'hi');
      expect(
        (eventsNamed(events, 'error')[0] as { message: string }).message,
      ).toMatch(/Gemini API key was rejected/);
    });
  });
});
