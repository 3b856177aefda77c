import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { MongoClient, ObjectId, type Collection } from 'mongodb';
import type { Types } from 'mongoose';
import { TEST_MONGODB_URI_ENV } from '../../test/support/test-database';
import { ChatActivity } from './chat-activity';
import { ChatWrites } from './chat-writes';
import type { ChatRecord } from './schemas/chat.schema';

/** Chats raced per case: without ChatWrites FerretDB 1.24 lost one of the two writes in most of them. */
const CHATS = 20;
const INTERVAL_MS = 60_000;

describe('ChatWrites (one write of a chat document at a time, on the real database)', () => {
  let client: MongoClient;
  let chats: Collection<ChatRecord>;
  const dbName = `test_chat_writes_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    const uri = process.env[TEST_MONGODB_URI_ENV];
    if (!uri) throw new Error(`${TEST_MONGODB_URI_ENV} is not set`);
    client = await new MongoClient(uri).connect();
    chats = client.db(dbName).collection<ChatRecord>('chats');
  });
  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, second));
  const newChats = async (): Promise<Types.ObjectId[]> => {
    const ids = Array.from({ length: CHATS }, () => new ObjectId());
    await chats.insertMany(
      ids.map(
        (_id) =>
          ({
            _id,
            title: 'New chat',
            mode: 'general',
            updatedAt: at(0),
          }) as unknown as ChatRecord,
      ),
    );
    return ids as unknown as Types.ObjectId[];
  };
  const stored = (id: Types.ObjectId) =>
    chats.findOne(
      { _id: id },
      { projection: { title: 1, mode: 1, updatedAt: 1 } },
    );

  it('the activity time written late and a rename started in the same tick both stay', async () => {
    const writes = new ChatWrites(() => chats);
    const activity = new ChatActivity(
      writes,
      new Logger('ChatWritesSpec'),
      INTERVAL_MS,
    );
    const ids = await newChats();
    // One chat at a time, as the end of an interval meets one rename: its first turn writes at once,
    // the second's time waits, then the late write and the rename start together.
    for (const [i, id] of ids.entries()) {
      await activity.record(id, { updatedAt: at(1) });
      await activity.record(id, { updatedAt: at(2) });
      await Promise.all([
        activity.writeUnsaved(),
        writes.run(id, () =>
          chats.updateOne({ _id: id }, { $set: { title: `Herons ${i}` } }),
        ),
      ]);
    }
    activity.forget();
    const lost: string[] = [];
    for (const [i, id] of ids.entries()) {
      const chat = await stored(id);
      if (
        chat?.title !== `Herons ${i}` ||
        chat.updatedAt.getTime() !== at(2).getTime()
      )
        lost.push(`${chat?.title} ${chat?.updatedAt.toISOString()}`);
    }
    expect(lost).toEqual([]);
  });

  it('a turn’s write of the chat and a mode switch started in the same tick both stay', async () => {
    const writes = new ChatWrites(() => chats);
    const ids = await newChats();
    await Promise.all(
      ids.flatMap((id, i) => [
        writes.set(
          id.toHexString(),
          { _id: id },
          { updatedAt: at(3), title: `Terns ${i}` },
        ),
        writes.run(id, () =>
          chats.updateOne({ _id: id }, { $set: { mode: 'research' } }),
        ),
      ]),
    );
    const lost: string[] = [];
    for (const [i, id] of ids.entries()) {
      const chat = await stored(id);
      if (
        chat?.title !== `Terns ${i}` ||
        chat.mode !== 'research' ||
        chat.updatedAt.getTime() !== at(3).getTime()
      )
        lost.push(
          `${chat?.title} ${chat?.mode} ${chat?.updatedAt.toISOString()}`,
        );
    }
    expect(lost).toEqual([]);
  });

  it('writes of different chats still run at once; a write of an idle chat starts in its caller’s tick', async () => {
    const writes = new ChatWrites(() => chats);
    const [first, second] = await newChats();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const log: string[] = [];
    const slow = writes.run(first, async () => {
      log.push('first start');
      await held;
      await chats.updateOne({ _id: first }, { $set: { title: 'Slow' } });
      log.push('first end');
    });
    const other = writes.run(second, async () => {
      log.push('second start');
      await chats.updateOne({ _id: second }, { $set: { title: 'Quick' } });
      log.push('second end');
    });
    expect(log).toEqual(['first start', 'second start']);
    await other;
    expect(log).toEqual(['first start', 'second start', 'second end']);
    release();
    await slow;
    expect((await stored(first))?.title).toBe('Slow');
    expect((await stored(second))?.title).toBe('Quick');
  });
});
