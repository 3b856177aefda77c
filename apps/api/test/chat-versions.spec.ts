import type {
  ChatMessage,
  ChatSummary,
  MemorySearchResult,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { ChatCache } from '../src/chats/chat-cache';
import { ChatReplyService } from '../src/chats/chat-reply.service';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { openSse, type SseEvent } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type SentMessage = { role: string; content: unknown };

/** What the model was sent, as `role: text` lines (system prompt left out). */
function conversation(body: { messages: SentMessage[] }): string[] {
  return body.messages
    .filter((m) => m.role !== 'system' && m.role !== 'developer')
    .map(
      (m) =>
        `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
    );
}

/** The shown path as `role: content (index/count)` lines. */
function shown(messages: ChatMessage[]): string[] {
  return messages.map(
    (m) =>
      `${m.role}: ${m.content}${m.versions ? ` (${m.versions.index}/${m.versions.count})` : ''}`,
  );
}

describe('message versions (edit any message, regenerate any reply, switch ← n/m →)', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let base: { url: string; cookie: string };
  let db: Connection;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ env: { CHAT_HISTORY_LIMIT: '50' } });
    owner = await t.owner();
    client = await chatClient(t);
    base = await t.serve();
    db = t.app.get<Connection>(getConnectionToken());
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
  const messages = async (chatId: string, query = ''): Promise<ChatMessage[]> =>
    (await owner.get(`/api/chats/${chatId}/messages${query}`).expect(200)).body;
  const say = async (chatId: string, text: string, answer: string) => {
    fake.openai.enqueue({ text: [answer] });
    const events = await client.send(chatId, text);
    expect(eventsNamed(events, 'done')).toHaveLength(1);
  };
  const regenerate = async (
    chatId: string,
    messageId: string,
    answer: string,
    body: object = {},
  ): Promise<SseEvent[]> => {
    fake.openai.enqueue({ text: [answer] });
    const stream = await openSse(
      `${base.url}/api/chats/${chatId}/messages/${messageId}/regenerate`,
      { Cookie: base.cookie },
      { method: 'POST', body },
    );
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    expect(eventsNamed(events, 'done')).toHaveLength(1);
    return events;
  };
  const switchTo = async (
    chatId: string,
    messageId: string,
    n: number | string,
  ): Promise<ChatMessage[]> =>
    (
      await owner
        .post(`/api/chats/${chatId}/messages/${messageId}/versions/${n}`)
        .expect(200)
    ).body;
  const lastRequest = () => {
    const request = fake.openai.requests.at(-1);
    if (!request) throw new Error('The model was not called');
    return conversation(request.body as { messages: SentMessage[] });
  };
  const snapshot = () =>
    db.collection('messages').find({}).sort({ _id: 1 }).toArray();

  /** Q1/A1, Q2/A2, Q3/A3. */
  const threeExchanges = async () => {
    const chat = await newChat();
    await say(chat.id, 'Q1', 'A1');
    await say(chat.id, 'Q2', 'A2');
    await say(chat.id, 'Q3', 'A3');
    fake.reset();
    return { chat, path: await messages(chat.id) };
  };

  it('edits an older message: a new reply, the old branch hidden and reachable by switching, and the model reads the shown path', async () => {
    const { chat, path } = await threeExchanges();
    const q2 = path[2];
    const events = await regenerate(chat.id, q2.id, 'B2', {
      content: 'Q2 edited',
    });
    const edited = events[0].data as ChatMessage;
    expect(edited).toMatchObject({ role: 'user', content: 'Q2 edited' });
    // The model saw what came before the edited message, not the branch it replaced.
    expect(lastRequest()).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 edited',
    ]);

    const after = await messages(chat.id);
    expect(shown(after)).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 edited (2/2)',
      'assistant: B2',
    ]);
    expect(after[2].id).toBe(edited.id);

    // Version 1, named by the version shown or by the hidden one: the old branch comes back whole.
    const back = await switchTo(chat.id, edited.id, 1);
    expect(shown(back)).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 (1/2)',
      'assistant: A2',
      'user: Q3',
      'assistant: A3',
    ]);
    expect(shown(await messages(chat.id))).toEqual(shown(back));
    expect(back.map((m) => m.id)).toEqual(path.map((m) => m.id));

    // The next turn continues the shown branch.
    await say(chat.id, 'Q4', 'A4');
    expect(lastRequest()).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2',
      'user: Q3',
      'assistant: A3',
      'user: Q4',
    ]);

    // And back to version 2 (by the now hidden message's id): Q4/A4 leave with branch 1.
    expect(shown(await switchTo(chat.id, q2.id, '2'))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 edited (2/2)',
      'assistant: B2',
    ]);
    await say(chat.id, 'Q5', 'A5');
    expect(lastRequest()).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 edited',
      'assistant: B2',
      'user: Q5',
    ]);
    // Nothing was deleted: every version is stored.
    const stored = await db
      .collection('messages')
      .countDocuments({ chatId: new Types.ObjectId(chat.id) });
    expect(stored).toBe(6 + 2 + 2 + 2);
  });

  it('regenerates a reply twice: three versions, and the one shown is what the model reads next', async () => {
    const { chat, path } = await threeExchanges();
    const a2 = path[3];
    await regenerate(chat.id, a2.id, 'A2 second');
    const second = await messages(chat.id);
    await regenerate(chat.id, second[3].id, 'A2 third');
    const third = await messages(chat.id);
    expect(shown(third)).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 third (3/3)',
    ]);
    // Each new reply answered Q2 with only what came before it.
    expect(lastRequest()).toEqual(['user: Q1', 'assistant: A1', 'user: Q2']);

    expect(shown(await switchTo(chat.id, third[3].id, 2))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 second (2/3)',
    ]);
    await say(chat.id, 'Q next', 'ok');
    expect(lastRequest()).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 second',
      'user: Q next',
    ]);
    expect(shown(await switchTo(chat.id, a2.id, 1))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 (1/3)',
      'user: Q3',
      'assistant: A3',
    ]);
  });

  it('keeps nested versions: an edit inside an older branch survives switching away and back', async () => {
    const { chat, path } = await threeExchanges();
    await regenerate(chat.id, path[2].id, 'B2', { content: 'Q2 v2' });
    const v2 = await messages(chat.id);
    await switchTo(chat.id, v2[2].id, 1);
    // In branch 1, Q3 is edited.
    await regenerate(chat.id, path[4].id, 'B3', { content: 'Q3 v2' });
    const nested = await messages(chat.id);
    expect(shown(nested)).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 (1/2)',
      'assistant: A2',
      'user: Q3 v2 (2/2)',
      'assistant: B3',
    ]);
    // Away to Q2's second version, and back: branch 1 still shows Q3's second version.
    expect(shown(await switchTo(chat.id, path[2].id, 2))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 v2 (2/2)',
      'assistant: B2',
    ]);
    expect(shown(await switchTo(chat.id, path[2].id, 1))).toEqual(
      shown(nested),
    );
    expect(shown(await switchTo(chat.id, path[4].id, 1))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2 (1/2)',
      'assistant: A2',
      'user: Q3 (1/2)',
      'assistant: A3',
    ]);
    // A message inside a hidden branch cannot be switched or edited until its branch is shown.
    const before = await snapshot();
    const hidden = await owner
      .post(`/api/chats/${chat.id}/messages/${nested[5].id}/versions/1`)
      .expect(409);
    expect(hidden.body.message).toMatch(/not in the conversation as shown/);
    await owner
      .post(`/api/chats/${chat.id}/messages/${v2[3].id}/regenerate`)
      .send({})
      .expect(409);
    expect(await snapshot()).toEqual(before);
  });

  it('edits a message sent before a mode switch, the first message included', async () => {
    const chat = await newChat();
    await say(chat.id, 'Hello', 'Hi');
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'data' })
      .expect(200);
    await say(chat.id, 'Second', 'Two');
    const path = await messages(chat.id);
    expect(path).toHaveLength(5);
    await regenerate(chat.id, path[0].id, 'Hi again', {
      content: 'Hello there',
    });
    expect(lastRequest()).toEqual(['user: Hello there']);
    expect(shown(await messages(chat.id))).toEqual([
      'user: Hello there (2/2)',
      'assistant: Hi again',
    ]);
    expect(
      shown(await switchTo(chat.id, path[0].id, 1)).map((line) =>
        line.replace(/^assistant: $/, 'assistant: (mode switch)'),
      ),
    ).toEqual([
      'user: Hello (1/2)',
      'assistant: Hi',
      'assistant: (mode switch)',
      'user: Second',
      'assistant: Two',
    ]);
  });

  it('leaves hidden versions out of the chat search and memory_search', async () => {
    const chat = await newChat();
    await say(chat.id, 'Tell me about zanzibarquux', 'Quuxreply words');
    const [question] = await messages(chat.id);
    await regenerate(chat.id, question.id, 'Other words', {
      content: 'Tell me about plainthing',
    });
    const search = async (q: string) =>
      (
        (await owner.get('/api/chats').query({ q }).expect(200))
          .body as ChatSummary[]
      ).map((c) => c.id);
    const memory = async (query: string) => {
      const out = await callTool<{ results?: MemorySearchResult[] }>(
        t.app,
        'memory_search',
        { query },
      );
      return (out.results ?? []).filter((r) => r.chatId === chat.id);
    };
    /** The index follows changes through events: ask until it answers as expected (at most 15 s). */
    const eventually = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 150 && !(await check()); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await check()).toBe(true);
    };

    // The shown version is found, the hidden one is not.
    expect(await search('plainthing')).toContain(chat.id);
    expect(await search('zanzibarquux')).not.toContain(chat.id);
    expect(await search('quuxreply')).not.toContain(chat.id);
    await eventually(async () => (await memory('plainthing')).length > 0);
    expect(await memory('zanzibarquux')).toEqual([]);
    expect(await memory('quuxreply')).toEqual([]);

    // Switched: the other way round.
    await switchTo(chat.id, question.id, 1);
    expect(await search('zanzibarquux')).toContain(chat.id);
    expect(await search('plainthing')).not.toContain(chat.id);
    await eventually(async () => (await memory('zanzibarquux')).length > 0);
    await eventually(async () => (await memory('plainthing')).length === 0);
    expect(await memory('quuxreply')).not.toEqual([]);
  });

  it('pages over the shown path only', async () => {
    const { chat, path } = await threeExchanges();
    await regenerate(chat.id, path[1].id, 'A1 again');
    await say(chat.id, 'Q after', 'A after');
    const all = await messages(chat.id);
    expect(shown(all)).toEqual([
      'user: Q1',
      'assistant: A1 again (2/2)',
      'user: Q after',
      'assistant: A after',
    ]);
    const newest = await messages(chat.id, '?limit=2');
    expect(shown(newest)).toEqual(['user: Q after', 'assistant: A after']);
    const older = await messages(chat.id, `?limit=2&before=${newest[0].id}`);
    expect(shown(older)).toEqual(['user: Q1', 'assistant: A1 again (2/2)']);
    expect(await messages(chat.id, `?limit=2&before=${older[0].id}`)).toEqual(
      [],
    );

    // The chat's mark lost (a concurrent write of its document): the hidden versions stay hidden.
    await db
      .collection('chats')
      .updateOne(
        { _id: new Types.ObjectId(chat.id) },
        { $unset: { forked: '' } },
      );
    t.app.get(ChatCache).forget(chat.id);
    expect(shown(await messages(chat.id))).toEqual(shown(all));
    await say(chat.id, 'Q last', 'A last');
    expect(lastRequest()).toEqual([
      'user: Q1',
      'assistant: A1 again',
      'user: Q after',
      'assistant: A after',
      'user: Q last',
    ]);
  });

  describe('refusals change nothing', () => {
    it('409 on a switch or an edit while a reply streams', async () => {
      const { chat, path } = await threeExchanges();
      await regenerate(chat.id, path[3].id, 'A2 again');
      fake.openai.enqueue({
        text: ['slow ', 'reply ', 'here'],
        chunkDelayMs: 150,
      });
      const running = await client.open(chat.id, 'Slowly please');
      await running.next((e) => e.event === 'delta');
      // The turn stores its two messages beside the model call: wait for them.
      while (
        !(await db
          .collection('messages')
          .countDocuments({ content: 'Slowly please' }))
      )
        await new Promise((done) => setTimeout(done, 10));
      // The running reply keeps saving what it streams: compare the tree, not its text.
      const tree = async () =>
        (await snapshot()).map(({ _id, parentId, hiddenWith, role }) => ({
          _id,
          parentId,
          hiddenWith,
          role,
        }));
      const before = await tree();
      const busy = await owner
        .post(`/api/chats/${chat.id}/messages/${path[3].id}/versions/1`)
        .expect(409);
      expect(busy.body.message).toMatch(/already running/);
      await owner
        .post(`/api/chats/${chat.id}/messages/${path[0].id}/regenerate`)
        .send({ content: 'changed' })
        .expect(409);
      expect(await tree()).toEqual(before);
      await running.rest();
    });

    it('409 on a version switch while the mode switch is written, and on a mode switch while a version is shown', async () => {
      const { chat, path } = await threeExchanges();
      await regenerate(chat.id, path[3].id, 'A2 again');
      const replies = t.app.get(ChatReplyService);
      // The regenerated reply frees the chat just after its last event.
      while (replies.isRunning(chat.id))
        await new Promise((done) => setTimeout(done, 10));
      // The owner's mode switch holds the path while it writes: a version switch then waits.
      const release = replies.holdPath(chat.id);
      const before = await snapshot();
      const refused = await owner
        .post(`/api/chats/${chat.id}/messages/${path[3].id}/versions/1`)
        .expect(409);
      expect(refused.body.message).toMatch(/already running/);
      const modeRefused = await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ mode: 'todo' })
        .expect(409);
      expect(modeRefused.body.message).toMatch(/being changed/);
      expect(await snapshot()).toEqual(before);
      release();
      await switchTo(chat.id, path[3].id, 1);
      await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ mode: 'todo' })
        .expect(200);
    });

    it('400 for a version that is not a number from 1, 404 for unknown chats, messages and versions', async () => {
      const { chat, path } = await threeExchanges();
      const other = await threeExchanges();
      await regenerate(chat.id, path[1].id, 'A1 again');
      const reply = (await messages(chat.id))[1];
      fake.reset();
      const before = await snapshot();
      const url = (chatId: string, messageId: string, n: string) =>
        `/api/chats/${chatId}/messages/${messageId}/versions/${n}`;
      for (const n of ['0', '-1', 'abc', '1.5', '1e3', '%20', '99999999'])
        expect(
          (await owner.post(url(chat.id, reply.id, n)).expect(400)).body
            .message,
        ).toMatch(/n must be a version number/);
      for (const [chatId, messageId, n, expected] of [
        ['0123456789abcdef01234567', reply.id, '1', /Chat '.*' not found/],
        ['nope', reply.id, '1', /Chat 'nope' not found/],
        [chat.id, '0123456789abcdef01234567', '1', /Message '.*' not found/],
        [chat.id, 'not-an-id', '1', /Message 'not-an-id' not found/],
        [chat.id, other.path[1].id, '1', /Message '.*' not found/],
        [chat.id, reply.id, '3', /versions 1 to 2, not 3/],
        [chat.id, path[0].id, '2', /one version, not 2/],
      ] as const)
        expect(
          (await owner.post(url(chatId, messageId, n)).expect(404)).body
            .message,
        ).toMatch(expected);
      expect(await snapshot()).toEqual(before);
      // The version already shown, or a message with one version: nothing to do, the path as it is.
      expect(shown(await switchTo(chat.id, reply.id, 2))).toEqual(
        shown(await messages(chat.id)),
      );
      await switchTo(chat.id, path[0].id, 1);
      expect(await snapshot()).toEqual(before);
      expect(fake.openai.requests).toHaveLength(0);
    });
  });

  it('keeps hidden versions through a backup and a restore: switching back works afterwards', async () => {
    const { chat, path } = await threeExchanges();
    await regenerate(chat.id, path[3].id, 'A2 again');
    const archive = (
      await owner
        .get('/api/backup')
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .expect(200)
    ).body as Buffer;
    await owner.delete(`/api/chats/${chat.id}`).expect(204);
    await owner
      .post('/api/backup/restore?replace=true')
      .set('Content-Type', 'application/gzip')
      .send(archive)
      .expect(200);
    const restored = await messages(chat.id);
    expect(shown(restored)).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 again (2/2)',
    ]);
    expect(shown(await switchTo(chat.id, restored[3].id, 1))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2 (1/2)',
      'user: Q3',
      'assistant: A3',
    ]);
  });

  it('deletes every version with the chat', async () => {
    const { chat, path } = await threeExchanges();
    await regenerate(chat.id, path[1].id, 'A1 again');
    await owner.delete(`/api/chats/${chat.id}`).expect(204);
    expect(
      await db
        .collection('messages')
        .countDocuments({ chatId: new Types.ObjectId(chat.id) }),
    ).toBe(0);
  });
});
