import type {
  ChatMessage,
  ChatSummary,
  MessageAuthor,
  SystemInstruction,
  UploadedAttachment,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import {
  ChatReplyService,
  MESSAGE_NOT_STORED,
} from '../src/chats/chat-reply.service';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/**
 * The model is called while the turn's messages are being stored (the first
 * token does not wait for the database). These pin what happens when that
 * write fails: the database itself refuses the message here (FerretDB refuses
 * a field name with a dot), nothing is mocked.
 */
describe('chat replies start before the messages are stored', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let replies: ChatReplyService;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    client = await chatClient(t);
    replies = t.app.get(ChatReplyService);
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
  const storedCount = (chatId: string) =>
    t.app
      .get<Connection>(getConnectionToken())
      .collection('messages')
      .countDocuments({ chatId: new Types.ObjectId(chatId) });
  /** An author the database refuses to store (a field name with a dot). */
  const unstorable = {
    kind: 'contact',
    channel: 'whatsapp',
    name: 'Ann',
    phone: '+15550001111',
    'not.storable': true,
  } as unknown as MessageAuthor;

  it('a message the database refuses ends the stream with an error event; nothing of the turn stays and no tool runs', async () => {
    const chat = await newChat();
    const file: UploadedAttachment = (
      await owner
        .post('/api/attachments')
        .attach('file', Buffer.from('some notes'), 'notes.txt')
        .expect(201)
    ).body;
    // The model answers at once with a tool call that would change the memory, then text.
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_mem',
            name: 'save_memory',
            arguments: { memory: '- From a message that was never stored' },
          },
        ],
      },
      { text: ['Done', ' that.'] },
    );
    const prepared = await replies.prepare(chat.id, 'Remember this', {
      author: unstorable,
      attachmentIds: [file.id],
    });
    const events: Array<{ event: string; data: unknown }> = [];
    const reply = await prepared.run((event, data) =>
      events.push({ event, data }),
    );

    expect(reply).toMatchObject({
      messageId: null,
      status: 'error',
      error: MESSAGE_NOT_STORED,
      usage: null,
    });
    expect(events[0].event).toBe('message');
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { message: MESSAGE_NOT_STORED, messageId: null, unsaved: true },
    });
    expect(eventsNamed(events, 'done')).toEqual([]);
    // Nothing half-stored, the chat keeps its name, no reply is left running.
    expect(await storedCount(chat.id)).toBe(0);
    expect(await messages(chat.id)).toEqual([]);
    const list: ChatSummary[] = (await owner.get('/api/chats').expect(200))
      .body;
    expect(list.find((c) => c.id === chat.id)).toMatchObject({
      title: 'New chat',
      running: false,
    });
    // The tool the model asked for did not run.
    const instruction: SystemInstruction = (
      await owner.get('/api/system-instruction').expect(200)
    ).body;
    expect(instruction.memory).not.toContain('never stored');

    // The file was released: it can be sent again, and the next turn knows nothing of the lost message.
    fake.reset();
    fake.openai.enqueue({ text: ['Hello again'] });
    const again = await client.send(chat.id, 'Second try');
    expect(eventsNamed(again, 'done')).toHaveLength(1);
    const resent = await replies.prepare(chat.id, 'With the file', {
      attachmentIds: [file.id],
    });
    fake.openai.enqueue({ text: ['Got the file'] });
    expect((await resent.run()).status).toBe('complete');
    const sent = fake.openai.requests.at(-2)?.body.messages ?? [];
    expect(JSON.stringify(sent)).not.toContain('Remember this');
    expect((await messages(chat.id)).map((m) => m.content)).toEqual([
      'Second try',
      'Hello again',
      'With the file',
      'Got the file',
    ]);
  });

  it('streams while the messages are stored and stores the turn as before', async () => {
    const chat = await newChat();
    fake.openai.enqueue({
      text: ['One ', 'two ', 'three'],
      chunkDelayMs: 5,
      usage: { promptTokens: 4, completionTokens: 3 },
    });
    const events = await client.send(chat.id, 'Count');
    expect(events[0]).toMatchObject({
      event: 'message',
      data: { role: 'user', content: 'Count' },
    });
    const done = eventsNamed(events, 'done')[0] as { messageId: string };
    const stored = await messages(chat.id);
    expect(stored).toEqual([
      expect.objectContaining({
        role: 'user',
        content: 'Count',
        status: 'complete',
      }),
      expect.objectContaining({
        id: done.messageId,
        role: 'assistant',
        content: 'One two three',
        status: 'complete',
      }),
    ]);
    const list: ChatSummary[] = (await owner.get('/api/chats').expect(200))
      .body;
    expect(list.find((c) => c.id === chat.id)?.title).toBe('Count');
  });
});
