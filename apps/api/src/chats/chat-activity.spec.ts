import { Logger } from '@nestjs/common';
import { ObjectId, type Collection } from 'mongodb';
import type { Types } from 'mongoose';
import { GroupedUpdates } from '../database/grouped-updates';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import { ChatActivity } from './chat-activity';
import type { ChatRecord } from './schemas/chat.schema';

const INTERVAL_MS = 300;

describe('ChatActivity (a chat’s activity time, written at most once an interval)', () => {
  let database: WatchedTestDatabase;
  let chats: Collection<ChatRecord>;
  /** `update` commands to this test's database so far. */
  const updates = () => database.count('update');
  let activity: ChatActivity;

  beforeAll(async () => {
    database = await watchedTestDatabase('test_chat_activity');
    chats = database.db.collection<ChatRecord>('chats');
  });
  beforeEach(() => {
    activity = new ChatActivity(
      new GroupedUpdates(() => chats),
      new Logger('ChatActivitySpec'),
      INTERVAL_MS,
    );
  });
  afterEach(() => activity.forget());
  afterAll(() => database.close());

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
  /** Waits (15 s at most: a busy machine) until `updates()` reaches `count`. */
  const updatesReach = async (count: number) => {
    for (let waited = 0; updates() < count && waited < 15_000; waited += 20)
      await sleep(20);
    expect(updates()).toBe(count);
  };

  it('writes the first turn’s time at once, the next turns’ once at the end of the interval', async () => {
    const id = await newChat();
    const before = updates();
    await activity.record(id, { updatedAt: at(1) });
    expect(updates()).toBe(before + 1);
    expect(await storedTime(id)).toBe(at(1).toISOString());
    const recordedAt = performance.now();
    await activity.record(id, { updatedAt: at(2) });
    await activity.record(id, { updatedAt: at(3) });
    expect(updates()).toBe(before + 1);
    expect(await storedTime(id)).toBe(at(1).toISOString());
    await updatesReach(before + 2);
    expect(performance.now() - recordedAt).toBeGreaterThanOrEqual(
      INTERVAL_MS - 50,
    );
    expect(await storedTime(id)).toBe(at(3).toISOString());
  });

  /** An activity whose writes are recorded (their times), and last longer than the interval when `slow(filter)`. */
  const withSlowWrites = (slow: (filter: object) => boolean) => {
    const written: string[] = [];
    const slowActivity = new ChatActivity(
      {
        set: async (_key, filter, fields) => {
          written.push((fields?.updatedAt as Date).toISOString());
          if (slow(filter as object)) await sleep(INTERVAL_MS + 100);
        },
      },
      new Logger('ChatActivitySpec'),
      INTERVAL_MS,
    );
    return { slowActivity, written };
  };

  it('counts the interval from the end of a write, so a slow write does not make the next turn’s time a write', async () => {
    const { slowActivity: slow, written } = withSlowWrites(() => true);
    const id = new ObjectId() as unknown as Types.ObjectId;
    await slow.record(id, { updatedAt: at(1) });
    await slow.record(id, { updatedAt: at(2) });
    expect(written).toEqual([at(1).toISOString()]);
    slow.forget();
  });

  it('counts the interval from the end of a late write too', async () => {
    // The end-of-interval write (it only moves the time forward: a filter on updatedAt) is the slow one.
    const { slowActivity: slowLate, written } = withSlowWrites(
      (filter) => 'updatedAt' in filter,
    );
    const id = new ObjectId() as unknown as Types.ObjectId;
    await slowLate.record(id, { updatedAt: at(1) });
    await slowLate.record(id, { updatedAt: at(2) });
    await slowLate.writeUnsaved();
    await slowLate.record(id, { updatedAt: at(3) });
    expect(written).toEqual([at(1).toISOString(), at(2).toISOString()]);
    slowLate.forget();
  });

  it('a title (or any other field) goes out at once, with the time', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(2), title: 'Herons' });
    const chat = await chats.findOne({ _id: id });
    expect(chat).toMatchObject({ title: 'Herons', updatedAt: at(2) });
  });

  it('never moves a newer time back', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(2) });
    // Before the late write, another writer (a rename) stored a later time.
    await chats.updateOne({ _id: id }, { $set: { updatedAt: at(5) } });
    const before = updates();
    // The late write is still sent, and leaves the newer time.
    await updatesReach(before + 1);
    expect(await storedTime(id)).toBe(at(5).toISOString());
  });

  it('writes what waits when the app stops', async () => {
    const id = await newChat();
    await activity.record(id, { updatedAt: at(1) });
    await activity.record(id, { updatedAt: at(4) });
    expect(await storedTime(id)).toBe(at(1).toISOString());
    await activity.writeUnsaved();
    expect(await storedTime(id)).toBe(at(4).toISOString());
  });
});
