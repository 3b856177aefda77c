import type { Collection } from 'mongodb';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import { GroupedUpdates, MAX_UPDATES_PER_COMMAND } from './grouped-updates';

interface Doc {
  _id: string;
  value: string;
}

describe('GroupedUpdates (group commit of $set updates)', () => {
  let database: WatchedTestDatabase;
  let collection: Collection<Doc>;
  /** The commands sent since the last clear, with their number of update statements. */
  const commands = {
    clear: () => (database.commands.length = 0),
    list: () =>
      database.commands.map((event) => ({
        name: event.commandName,
        statements:
          (event.command as { updates?: unknown[] }).updates?.length ?? 0,
      })),
  };

  beforeAll(async () => {
    database = await watchedTestDatabase('test_grouped_updates');
    collection = database.db.collection<Doc>('docs');
  });

  afterAll(() => database.close());

  const seed = async (ids: string[]) => {
    await collection.deleteMany({});
    await collection.insertMany(ids.map((_id) => ({ _id, value: 'start' })));
  };
  const values = async () =>
    (await collection.find({}).sort({ _id: 1 }).toArray()).map(
      (d) => `${d._id}=${d.value}`,
    );

  it('writes what is given while a command is in flight as one command, a document once per command', async () => {
    await seed(['a', 'b', 'c']);
    const updates = new GroupedUpdates(() => collection);
    const set = (id: string, value: string) =>
      updates.set(id, { _id: id }, { value });
    commands.clear();
    const first = set('a', 'a1');
    await new Promise((resolve) => setImmediate(resolve));
    // Made while the first is in flight: b and c go together; a's second write waits for the next
    // command, so it lands after its first even though both were queued at once.
    await Promise.all([
      first,
      set('b', 'b1'),
      set('a', 'a2'),
      set('c', 'c1'),
      set('a', 'a3'),
    ]);
    expect(commands.list()).toEqual([
      { name: 'update', statements: 1 },
      { name: 'update', statements: 3 },
      { name: 'update', statements: 1 },
    ]);
    expect(await values()).toEqual(['a=a3', 'b=b1', 'c=c1']);
  });

  it('writes at most MAX_UPDATES_PER_COMMAND updates per command', async () => {
    const ids = Array.from(
      { length: 2 * MAX_UPDATES_PER_COMMAND + 6 },
      (_, i) => `d${String(i).padStart(3, '0')}`,
    );
    await seed(ids);
    const updates = new GroupedUpdates(() => collection);
    commands.clear();
    const first = updates.set(ids[0], { _id: ids[0] }, { value: 'x' });
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([
      first,
      ...ids.slice(1).map((id) => updates.set(id, { _id: id }, { value: 'x' })),
    ]);
    expect(MAX_UPDATES_PER_COMMAND).toBe(50);
    expect(commands.list().map((c) => c.statements)).toEqual([1, 50, 50, 5]);
    expect(await values()).toEqual(ids.map((id) => `${id}=x`));
  });

  it('keeps the order of one document’s writes when a failed batch is written again one by one', async () => {
    await seed(['a', 'b']);
    const updates = new GroupedUpdates(() => collection);
    const first = updates.set('b', { _id: 'b' }, { value: 'b0' });
    await new Promise((resolve) => setImmediate(resolve));
    const rest = await Promise.allSettled([
      updates.set('a', { _id: 'a' }, { value: 'a1' }),
      // `_id` cannot change: the database refuses this write, and the batch is retried write by write.
      updates.set('b', { _id: 'b' }, { _id: 'other' } as never),
      updates.set('a', { _id: 'a' }, { value: 'a2' }),
    ]);
    await first;
    expect(rest.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(await values()).toEqual(['a=a2', 'b=b0']);
  });
});
