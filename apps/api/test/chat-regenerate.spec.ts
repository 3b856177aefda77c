import type { ChatMessage, ChatSummary } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { ChatReplyService } from '../src/chats/chat-reply.service';
import { openSse, type SseEvent } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** The text of the last user turn the fake model received. */
function lastUserText(body: {
  messages: Array<{ role: string; content: unknown }>;
}): string {
  const user = body.messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string'
    ? user.content
    : JSON.stringify(user?.content);
}

describe('failed replies, regenerate and edit-and-resend', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let base: { url: string; cookie: string };

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { CHAT_HISTORY_LIMIT: '20' } });
    owner = await t.owner();
    client = await chatClient(t);
    base = await t.serve();
    await useModel(t, 'gpt-4.1-mini');
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;
  const messages = async (chatId: string): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages`).expect(200)).body;
  const regenerate = (chatId: string, messageId: string, body: object = {}) =>
    openSse(
      `${base.url}/api/chats/${chatId}/messages/${messageId}/regenerate`,
      { Cookie: base.cookie },
      { method: 'POST', body },
    );
  const regenerated = async (
    chatId: string,
    messageId: string,
    body: object = {},
  ): Promise<SseEvent[]> => {
    const stream = await regenerate(chatId, messageId, body);
    expect(stream.status).toBe(200);
    return stream.rest();
  };
  /** A chat with one exchange: the user's question and the model's answer. */
  const chatWithReply = async (question = 'What is 2+2?') => {
    const chat = await newChat();
    fake.openai.enqueue({ text: ['Four.'] });
    await client.send(chat.id, question);
    const [user, reply] = await messages(chat.id);
    fake.reset();
    return { chat, user, reply };
  };

  describe('a failed reply is kept', () => {
    it('stores a reply that failed before any text with status "error" and its error text, across a reload', async () => {
      const chat = await newChat();
      fake.openai.enqueue({ status: 500, message: 'upstream says no' });
      const events = await client.send(chat.id, 'Hello?');
      const error = eventsNamed(events, 'error')[0] as {
        message: string;
        messageId: string | null;
      };
      expect(error.message).toMatch(/server error/i);
      expect(error.messageId).toEqual(expect.any(String));

      // A reload reads the chat again: the failure is there, with nothing else.
      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.role, m.status])).toEqual([
        ['user', 'complete'],
        ['assistant', 'error'],
      ]);
      expect(stored[1]).toMatchObject({
        id: error.messageId,
        content: '',
        parts: [],
        error: error.message,
      });

      // The empty failure is not sent to the model as a turn of the history.
      fake.openai.enqueue({ text: ['Hi!'] });
      await client.send(chat.id, 'Hello again');
      const sent = fake.openai.requests[1].body.messages as Array<{
        role: string;
      }>;
      expect(sent.filter((m) => m.role === 'assistant')).toHaveLength(0);
    });

    it('keeps the partial text of a reply cut off mid-way', async () => {
      const chat = await newChat();
      fake.openai.enqueue({ text: ['Half ', 'an ', 'answer'], cutAfter: 2 });
      await client.send(chat.id, 'Tell me');
      const [, reply] = await messages(chat.id);
      expect(reply).toMatchObject({ status: 'error', content: 'Half an ' });
      expect(reply.error).toEqual(expect.any(String));
    });
  });

  it("labels the scheduler's prompts (trigger cron / pulse), not the owner's messages", async () => {
    const chat = await newChat();
    const replies = t.app.get(ChatReplyService);
    fake.openai.fallback = { text: ['ok'] };
    await (
      await replies.prepare(chat.id, 'Run the job', { source: 'cron' })
    ).run();
    await (
      await replies.prepare(chat.id, 'Pulse now', { source: 'pulse' })
    ).run();
    await client.send(chat.id, 'Mine');
    const users = (await messages(chat.id)).filter((m) => m.role === 'user');
    expect(users.map((m) => [m.content, m.trigger])).toEqual([
      ['Run the job', 'cron'],
      ['Pulse now', 'pulse'],
      ['Mine', undefined],
    ]);
  });

  describe('POST /api/chats/:id/messages/:messageId/regenerate', () => {
    it('streams a new reply to the same user message with the events of a send; the old reply stays as version 1', async () => {
      const { chat, user, reply } = await chatWithReply();
      fake.openai.enqueue({ text: ['It ', 'is four.'] });
      const events = await regenerated(chat.id, reply.id);

      expect(events.map((e) => e.event)).toEqual([
        'message',
        'delta',
        'delta',
        'done',
      ]);
      expect(events[0].data).toMatchObject({
        id: user.id,
        role: 'user',
        content: 'What is 2+2?',
      });
      const done = eventsNamed(events, 'done')[0] as { messageId: string };
      expect(done.messageId).not.toBe(reply.id);

      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.id, m.status, m.content])).toEqual([
        [user.id, 'complete', 'What is 2+2?'],
        [done.messageId, 'complete', 'It is four.'],
      ]);
      expect(stored[0].versions).toBeUndefined();
      expect(stored[1].versions).toEqual({ index: 2, count: 2 });
      // The model got the question again, without the old answer in the history.
      const body = fake.openai.requests[0].body;
      expect(lastUserText(body)).toBe('What is 2+2?');
      expect(
        (body.messages as Array<{ role: string }>).filter(
          (m) => m.role === 'assistant',
        ),
      ).toHaveLength(0);
    });

    it('retries a reply that failed before any text', async () => {
      const chat = await newChat();
      // The adapter sends a 503'd call twice more before the reply fails.
      const overloaded = { status: 503, message: 'overloaded' };
      fake.openai.enqueue(overloaded, overloaded, overloaded);
      const failed = eventsNamed(
        await client.send(chat.id, 'Hi'),
        'error',
      )[0] as {
        messageId: string;
      };
      fake.openai.enqueue({ text: ['Hello!'] });
      const events = await regenerated(chat.id, failed.messageId);
      expect(eventsNamed(events, 'done')).toHaveLength(1);
      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.role, m.status, m.content])).toEqual([
        ['user', 'complete', 'Hi'],
        ['assistant', 'complete', 'Hello!'],
      ]);
    });

    it('edits the user message and resends it (edit and resend): a new version of the message', async () => {
      const { chat, user, reply } = await chatWithReply('What is 2+3?');
      fake.openai.enqueue({ text: ['Ten.'] });
      const events = await regenerated(chat.id, reply.id, {
        content: 'What is 5+5?',
      });
      expect(events[0].data).toMatchObject({
        role: 'user',
        content: 'What is 5+5?',
      });
      expect(lastUserText(fake.openai.requests[0].body)).toBe('What is 5+5?');
      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'What is 5+5?'],
        ['assistant', 'Ten.'],
      ]);
      expect(stored[0].id).toBe((events[0].data as ChatMessage).id);
      expect(stored[0].id).not.toBe(user.id);
      expect(stored[0].versions).toEqual({ index: 2, count: 2 });
    });

    it("keeps the new reply's own failure, so it can be retried again", async () => {
      const { chat, reply } = await chatWithReply();
      fake.openai.enqueue({ status: 500, message: 'down' });
      const events = await regenerated(chat.id, reply.id);
      const error = eventsNamed(events, 'error')[0] as { messageId: string };
      const stored = await messages(chat.id);
      expect(stored.map((m) => [m.role, m.status])).toEqual([
        ['user', 'complete'],
        ['assistant', 'error'],
      ]);
      expect(stored[1].id).toBe(error.messageId);
    });

    describe('refusals change nothing', () => {
      const snapshot = async () => {
        const connection = t.app.get<Connection>(getConnectionToken());
        return connection
          .collection('messages')
          .find({})
          .sort({ _id: 1 })
          .toArray();
      };

      it('404 for an unknown chat, an unknown or malformed message id, or a message of another chat', async () => {
        const { chat, reply } = await chatWithReply();
        const other = await chatWithReply();
        const before = await snapshot();
        for (const [chatId, messageId, expected] of [
          ['0123456789abcdef01234567', reply.id, /Chat '.*' not found/],
          [chat.id, '0123456789abcdef01234567', /Message '.*' not found/],
          [chat.id, 'not-an-id', /Message 'not-an-id' not found/],
          [chat.id, other.reply.id, /Message '.*' not found/],
        ] as const) {
          const res = await owner
            .post(`/api/chats/${chatId}/messages/${messageId}/regenerate`)
            .send({})
            .expect(404);
          expect(res.body.message).toMatch(expected);
        }
        expect(await snapshot()).toEqual(before);
        expect(fake.openai.requests).toHaveLength(0);
      });

      it('400 for a user message without content, and for blank or too long content', async () => {
        const { chat, user, reply } = await chatWithReply();
        const before = await snapshot();
        const asUser = await owner
          .post(`/api/chats/${chat.id}/messages/${user.id}/regenerate`)
          .send({})
          .expect(400);
        expect(asUser.body.message).toBe(
          'content: send the new text of your message to edit it.',
        );
        for (const content of ['', '   ', 'x'.repeat(100_001), 42, null]) {
          await owner
            .post(`/api/chats/${chat.id}/messages/${reply.id}/regenerate`)
            .send({ content })
            .expect(400);
        }
        await owner
          .post(`/api/chats/${chat.id}/messages/${reply.id}/regenerate`)
          .send({ content: 'ok', extra: true })
          .expect(400);
        expect(await snapshot()).toEqual(before);
        expect(fake.openai.requests).toHaveLength(0);
      });

      it('409 while a reply runs', async () => {
        const { chat, reply } = await chatWithReply();
        fake.openai.enqueue({ text: ['Second ', 'answer'] });
        await client.send(chat.id, 'And 3+3?');
        const before = await snapshot();

        const latest = (await messages(chat.id)).at(-1) as ChatMessage;
        fake.openai.enqueue({
          text: ['slow ', 'reply ', 'here'],
          chunkDelayMs: 150,
        });
        const running = await client.open(chat.id, 'Slowly please');
        await running.next((e) => e.event === 'delta');
        const busy = await owner
          .post(`/api/chats/${chat.id}/messages/${latest.id}/regenerate`)
          .send({ content: 'changed' })
          .expect(409);
        expect(busy.body.message).toMatch(/already running/);
        // An older reply, too (any shown reply can be regenerated, but not while one runs).
        await owner
          .post(`/api/chats/${chat.id}/messages/${reply.id}/regenerate`)
          .send({})
          .expect(409);
        await running.rest();

        const after = await snapshot();
        // Only the reply that was running wrote (its two messages); the refused calls wrote nothing.
        expect(after.slice(0, before.length)).toEqual(before);
        expect(after).toHaveLength(before.length + 2);
        expect(fake.openai.requests).toHaveLength(2);
      });

      it('400 when no model is configured, nothing changed', async () => {
        const { chat, reply } = await chatWithReply();
        const before = await snapshot();
        await owner
          .patch('/api/settings')
          .send({ primaryModel: null })
          .expect(200);
        try {
          const res = await owner
            .post(`/api/chats/${chat.id}/messages/${reply.id}/regenerate`)
            .send({ content: 'edited' })
            .expect(400);
          expect(res.body.message).toMatch(/No model is configured/);
          expect(await snapshot()).toEqual(before);
        } finally {
          await useModel(t, 'gpt-4.1-mini');
        }
      });
    });
  });
});

describe('a stalled provider', () => {
  let fake: Fake;
  let t: TestApp;
  let client: ChatClient;
  let owner: TestAgent;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { LLM_STALL_TIMEOUT_MS: '700' } });
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

  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;

  it.each([
    ['OpenAI', 'gpt-4.1-mini', 'openai'],
    ['Gemini', 'gemini-2.5-flash', 'gemini'],
  ] as const)(
    'ends a reply whose %s upstream goes silent before the first token with a clear error, kept as the reply',
    async (name, model, provider) => {
      await useModel(t, model);
      const chat = await newChat();
      fake[provider].enqueue({ text: ['never sent'], stallAfter: 0 });
      const started = Date.now();
      const events = await client.send(chat.id, 'Hello?');
      const elapsed = Date.now() - started;
      const error = eventsNamed(events, 'error')[0] as {
        message: string;
        messageId: string;
      };
      expect(error.message).toBe(
        `${name} sent nothing for 0.7 s, so the reply was stopped. Try again; if it keeps happening, the provider may be overloaded.`,
      );
      expect(elapsed).toBeGreaterThanOrEqual(650);
      expect(elapsed).toBeLessThan(10_000);
      const stored: ChatMessage[] = (
        await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
      ).body;
      expect(stored[1]).toMatchObject({
        id: error.messageId,
        status: 'error',
        error: error.message,
      });
      expect(
        (await owner.get('/api/chats').expect(200)).body.find(
          (c: ChatSummary) => c.id === chat.id,
        ).running,
      ).toBe(false);
      await useModel(t, 'gpt-4.1-mini');
    },
  );

  it('keeps the text that arrived before the upstream stalled', async () => {
    const chat = await newChat();
    fake.openai.enqueue({
      text: ['Partial ', 'answer', 'lost'],
      stallAfter: 2,
    });
    const events = await client.send(chat.id, 'Tell me');
    expect(eventsNamed(events, 'error')[0]).toMatchObject({
      message: expect.stringMatching(/^OpenAI sent nothing for 0.7 s/),
    });
    const [, reply]: ChatMessage[] = (
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
    ).body;
    expect(reply).toMatchObject({
      status: 'error',
      content: 'Partial answer',
    });
  });

  it('does not cut a slow upstream that keeps sending (each pause shorter than the limit)', async () => {
    const chat = await newChat();
    fake.openai.enqueue({
      text: ['one ', 'two ', 'three ', 'four'],
      chunkDelayMs: 400,
    });
    const events = await client.send(chat.id, 'Count slowly');
    expect(eventsNamed(events, 'error')).toEqual([]);
    expect(eventsNamed(events, 'done')).toHaveLength(1);
  });
});
