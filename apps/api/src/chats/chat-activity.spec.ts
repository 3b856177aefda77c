import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { MongoClient, ObjectId, type Collection } from 'mongodb';
import type { Types } from 'mongoose';
import { GroupedUpdates } from '../database/grouped-updates';
import { TEST_MONGODB_URI_ENV } from '../../test/support/test-database';
import { ChatActivity } from './chat-activity';
import type { ChatRecord } from './schemas/chat.schema';

const INTERVAL_MS = 300;

describe('ChatActivity (a chat’s activity time, written at most once an interval)', () => {
  let client: MongoClient;
  let chats: Collection<ChatRecord>;
  const dbName = `test_chat_activity_${randomBytes(6).toString('hex')}`;
  let updates = 0;
  const busy = new Set<string>();
  let activity: ChatActivity;

  beforeAll(async () => {
    const uri = process.env[TEST_MONGODB_URI_ENV];
    if (!uri) throw new Error(`${TEST_MONGODB_URI_ENV} is not set`);
    client = await new MongoClient(uri, { monitorCommands: true }).connect();
    client.on('commandStarted', (event) => {
      if (event.databaseName === dbName && event.commandName === 'update')
        updates++;
    });
    chats = client.db(dbName).collection<ChatRecord>('chats');
  });
  beforeEach(() => {
    busy.clear();
    activity = new ChatActivity(
      new GroupedUpdates(() => chats),
      new Logger('ChatActivitySpec'),
      (chatId) => busy.has(chatId),
      INTERVAL_MS,
    );
  });
  afterEach(() => activity.forget());
  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  const newChat = async (): Promise<Types.ObjectId> => {
    const _id = new ObjectId();
    await chats.insertOne({
      _id,
      title: 'New chat',
      updatedAt: new Date('2026-01-01T00:00:00Z'),
    } as unknown as ChatRecord);
    return _id as unknown as Types.ObjectId;
  };
  const storedTime = async (id: Types.ObjectId) =>
    (await chats.findOne({ _id: id }))?.updatedAt.toISOString();
  const at = (minute: number) =>
    new Date(`2026-01-01T10:${String(minute).padStart(2, '0')}:00Z`);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('writes the first turn’s time at once, the next turns’ once at the end of the interval', async () => {
    const id = await newChat();
    updates = 0;
    await activity.record(id, { updatedAt: at(1) });
    expect(updates).toBe(1);
    expect(await storedTime(id)).toBe(at(1).toISOString());
    await activity.record(id, { updatedAt: at(2) });
    await activity.record(id, { updatedAt: at(3) });
    expect(updates).toBe(1);
    expect(await storedTime(id)).toBe(at(1).toISOString());
    await sleep(INTERVAL_MS + 200);
    expect(updates).toBe(2);
    expect(await storedTime(id)).toBe(at(3).toISOString());
  });

  it('a title (or any other field) goes out at once, with the time', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(2), title: 'Herons' });
    const chat = await chats.findOne({ _id: id });
    expect(chat).toMatchObject({ title: 'Herons', updatedAt: at(2) });
  });

  it('waits while the chat is busy, and never moves a newer time back', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(2) });
    busy.add(id.toHexString());
    await sleep(INTERVAL_MS + 200);
    expect(await storedTime(id)).toBe(at(1).toISOString());
    // Meanwhile another writer (a rename) stored a later time.
    await chats.updateOne({ _id: id }, { $set: { updatedAt: at(5) } });
    busy.clear();
    await sleep(INTERVAL_MS + 200);
    expect(await storedTime(id)).toBe(at(5).toISOString());
  });

  it('writes what waits when the app stops', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(4) });
    expect(await storedTime(id)).toBe(at(1).toISOString());
    await activity.writeUnsaved(true);
    expect(await storedTime(id)).toBe(at(4).toISOString());
  });
});
