import { randomBytes } from 'node:crypto';
import { getConnectionToken } from '@nestjs/mongoose';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { Types, type Connection } from 'mongoose';
import { FLUSH_INTERVAL_MS } from '../src/chats/turn-recording';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';
import { TEST_MONGODB_URI_ENV } from './support/test-database';

/**
 * The database commands one owner's chat turn makes (issue 30: each costs the API about 0.3 ms of
 * CPU and FerretDB a transaction per document). What the turn needs is in memory (the chat, its
 * history, the settings): a turn reads nothing of its own, and writes the two messages (one insert),
 * the reply's end and the usage rollup; the chat's activity time at most once a minute.
 */
describe('database commands of a chat turn', () => {
  let fake: Awaited<ReturnType<typeof startFakeProviders>>;
  let t: TestApp;
  let client: ChatClient;
  let connection: Connection;
  const dbName = `test_${randomBytes(6).toString('hex')}`;
  let seen: CommandStartedEvent[] | null = null;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({
      database: {
        kind: 'embedded',
        uri: process.env[TEST_MONGODB_URI_ENV] as string,
        dbName,
        monitorCommands: true,
      },
    });
    connection = t.app.get<Connection>(getConnectionToken());
    connection.getClient().on('commandStarted', (event) => {
      if (event.databaseName === dbName) seen?.push(event);
    });
    client = await chatClient(t);
    await useModel(t, 'gpt-4.1-mini');
  });
  afterEach(() => fake.reset());
  let closed = false;
  afterAll(async () => {
    if (!closed) {
      await connection.dropDatabase().catch(() => undefined);
      await t?.close();
    }
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (): Promise<string> => {
    const owner = await t.owner();
    return (await owner.post('/api/chats').send({}).expect(201)).body.id;
  };

  /** The commands of one turn, as `<command> <collection>`, with the turn's wall time. */
  const turn = async (chatId: string, content: string) => {
    seen = [];
    const began = Date.now();
    const events = await client.send(chatId, content);
    const wallMs = Date.now() - began;
    expect(eventsNamed(events, 'done')).toHaveLength(1);
    // The chat's activity write and the usage rollup end before `reply-ended`; nothing else is left.
    await new Promise((settle) => setTimeout(settle, 200));
    const commands = seen.map(
      (e) => `${e.commandName} ${String(e.command[e.commandName])}`,
    );
    const inserted = seen
      .filter((e) => e.commandName === 'insert')
      .map((e) => (e.command.documents as unknown[]).length);
    seen = null;
    return { commands, inserted, wallMs };
  };

  /** Writes of the growing reply the 250 ms timer may add on a slow machine, beside the end's one. */
  const replyWrites = (commands: string[]) =>
    commands.filter((c) => c === 'update messages').length;
  const others = (commands: string[]) =>
    commands.filter((c) => c !== 'update messages').sort();

  it('a plain turn: one insert of both messages, the reply’s end, the usage; no read', async () => {
    const chatId = await newChat();
    fake.openai.enqueue({ text: ['Hello', ' there'] });
    await turn(chatId, 'First message names the chat');
    fake.openai.enqueue({ text: ['Fine', ', thanks'] });
    const { commands, inserted, wallMs } = await turn(chatId, 'How are you?');
    // The chat's time was written by the first turn this minute: this one's waits (ChatActivity).
    expect(others(commands)).toEqual(['insert messages', 'update usage']);
    expect(inserted).toEqual([2]);
    expect(replyWrites(commands)).toBeGreaterThanOrEqual(1);
    expect(replyWrites(commands)).toBeLessThanOrEqual(
      1 + Math.floor(wallMs / FLUSH_INTERVAL_MS),
    );
  });

  it('a quick tool round adds the tool’s own command and no write of the reply', async () => {
    const chatId = await newChat();
    const round = () => {
      fake.openai.enqueue({
        toolCalls: [
          {
            name: 'db_query',
            arguments: {
              operation: 'find',
              collection: 'contacts',
              filter: {},
              options: { limit: 5 },
            },
          },
        ],
      });
      fake.openai.enqueue({ text: ['No contacts', ' yet.'] });
    };
    // The first round switches the chat to the mode that offers db_query (a write of the chat's mode).
    round();
    await turn(chatId, 'Look up my contacts');
    round();
    const { commands, wallMs } = await turn(chatId, 'Look them up again');
    expect(others(commands)).toEqual([
      'find contacts',
      'insert messages',
      'update usage',
    ]);
    expect(replyWrites(commands)).toBeGreaterThanOrEqual(1);
    expect(replyWrites(commands)).toBeLessThanOrEqual(
      1 + Math.floor(wallMs / FLUSH_INTERVAL_MS),
    );
  });

  it('the chat’s latest activity time is stored when the app stops', async () => {
    const chatId = await newChat();
    fake.openai.enqueue({ text: ['One'] });
    await turn(chatId, 'First');
    t.clock.advance(5_000);
    fake.openai.enqueue({ text: ['Two'] });
    await turn(chatId, 'Second');
    const last = t.clock.now();
    const owner = await t.owner();
    const listed = (await owner.get('/api/chats').expect(200)).body as Array<{
      id: string;
      updatedAt: string;
    }>;
    expect(listed.find((c) => c.id === chatId)?.updatedAt).toBe(
      last.toISOString(),
    );
    const stored = () =>
      connection
        .collection('chats')
        .findOne({ _id: new Types.ObjectId(chatId) });
    expect((await stored())?.updatedAt).not.toEqual(last);
    closed = true;
    await t.app.close();
    const reader = await new MongoClient(
      process.env[TEST_MONGODB_URI_ENV] as string,
    ).connect();
    try {
      const chat = await reader
        .db(dbName)
        .collection('chats')
        .findOne({ _id: new Types.ObjectId(chatId) });
      expect(chat?.updatedAt).toEqual(last);
      await reader.db(dbName).dropDatabase();
    } finally {
      await reader.close();
    }
  });
});
