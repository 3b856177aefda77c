import type { Collection } from 'mongodb';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import type { InboundMessage } from './contact-auto-reply';
import { InboundWrites } from './inbound-writes';

describe('InboundWrites (group commit of inbound message states)', () => {
  let database: WatchedTestDatabase;
  let collection: Collection<InboundMessage>;

  beforeAll(async () => {
    database = await watchedTestDatabase('test_inbound_writes');
    collection = database.db.collection<InboundMessage>('inbound');
  });

  afterAll(() => database.close());

  const seed = async (ids: string[]) => {
    await collection.deleteMany({});
    await collection.insertMany(
      ids.map((id) => ({
        _id: id,
        body: id,
        timestamp: 1,
        processing: 'pending' as const,
        attempts: 1,
      })),
    );
  };
  const stored = async () =>
    (await collection.find({}).sort({ _id: 1 }).toArray()).map((d) => [
      d._id,
      d.processing,
      d.attempts,
    ]);

  it('stores the writes made while one is in flight with one command', async () => {
    await seed(['a', 'b', 'c', 'd']);
    const writes = new InboundWrites(() => collection);
    database.commands.length = 0;
    // The first goes out at once; the three made while it is in flight go together next.
    const first = writes.set('a', { processing: 'done' });
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([
      writes.set('b', { processing: 'done' }),
      writes.set('c', { processing: 'failed', attempts: 2 }),
      writes.set('d', { processing: 'skipped' }),
      first,
    ]);
    expect(database.commands.map((c) => c.commandName)).toEqual([
      'update',
      'update',
    ]);
    expect(await stored()).toEqual([
      ['a', 'done', 1],
      ['b', 'done', 1],
      ['c', 'failed', 2],
      ['d', 'skipped', 1],
    ]);
  });

  it('refuses only the write the database refused; the others of its batch are stored', async () => {
    await seed(['a', 'b', 'c', 'd']);
    const writes = new InboundWrites(() => collection);
    const first = writes.set('a', { processing: 'done' });
    await new Promise((resolve) => setImmediate(resolve));
    const rest = await Promise.allSettled([
      writes.set('b', { processing: 'done' }),
      // `_id` cannot change: the database refuses this one write.
      writes.set('c', { _id: 'other' }),
      writes.set('d', { processing: 'failed', attempts: 2 }),
    ]);
    await first;
    expect(rest.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(await stored()).toEqual([
      ['a', 'done', 1],
      ['b', 'done', 1],
      ['c', 'pending', 1],
      ['d', 'failed', 2],
    ]);
  });
});
