import { ObjectId, type Collection } from 'mongodb';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import { GroupedInserts, MAX_INSERTS_PER_COMMAND } from './grouped-inserts';

interface Doc {
  _id: ObjectId;
  key: string;
}

describe('GroupedInserts (group commit of inserts)', () => {
  let database: WatchedTestDatabase;
  let collection: Collection<Doc>;
  /** The `insert` commands sent since the last clear, as the keys of their documents. */
  const inserts = () =>
    database.commands
      .filter((event) => event.commandName === 'insert')
      .map((event) =>
        ((event.command as { documents: Doc[] }).documents ?? []).map(
          (doc) => doc.key,
        ),
      );
  const doc = (key: string): Doc => ({ _id: new ObjectId(), key });
  const stored = async () =>
    (await collection.find({}).toArray()).map((d) => d.key).sort();
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  beforeAll(async () => {
    database = await watchedTestDatabase('test_grouped_inserts');
    collection = database.db.collection<Doc>('docs');
    await collection.createIndex({ key: 1 }, { unique: true });
  });

  afterAll(() => database.close());

  beforeEach(async () => {
    await collection.deleteMany({});
    database.commands.length = 0;
  });

  it('inserts alone when idle, and what is given while a command is in flight as the next one, in order', async () => {
    const grouped = new GroupedInserts(() => collection);
    await grouped.insert([doc('a1'), doc('a2')]);
    expect(inserts()).toEqual([['a1', 'a2']]);

    database.commands.length = 0;
    const first = grouped.insert([doc('b1'), doc('b2')]);
    await tick();
    // Made while the first is in flight: one command, each caller's documents together and in order.
    const rest = [
      grouped.insert([doc('c1'), doc('c2')]),
      grouped.insert([doc('d1')]),
      grouped.insert([]),
      grouped.insert([doc('e1'), doc('e2')]),
    ];
    await Promise.all([first, ...rest]);
    expect(inserts()).toEqual([
      ['b1', 'b2'],
      ['c1', 'c2', 'd1', 'e1', 'e2'],
    ]);
    expect(await stored()).toEqual(
      ['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'd1', 'e1', 'e2'].sort(),
    );
  });

  it('a caller’s documents given in one tick leave together once that tick ends', async () => {
    const grouped = new GroupedInserts(() => collection);
    await Promise.all(['p', 'q', 'r'].map((key) => grouped.insert([doc(key)])));
    expect(inserts()).toEqual([['p', 'q', 'r']]);
  });

  it('sends at most MAX_INSERTS_PER_COMMAND callers per command', async () => {
    const grouped = new GroupedInserts(() => collection);
    const keys = Array.from({ length: 23 }, (_, i) => `k${i}`);
    await Promise.all(
      keys.map((key) => grouped.insert([doc(key), doc(`${key}b`)])),
    );
    expect(MAX_INSERTS_PER_COMMAND).toBe(10);
    expect(inserts().map((docs) => docs.length)).toEqual([20, 20, 6]);
    expect((await stored()).length).toBe(46);
  });

  it('takes another bound per command when given one', async () => {
    const grouped = new GroupedInserts(() => collection, 4);
    await Promise.all(
      Array.from({ length: 9 }, (_, i) => grouped.insert([doc(`m${i}`)])),
    );
    expect(inserts().map((docs) => docs.length)).toEqual([4, 4, 1]);
    expect((await stored()).length).toBe(9);
  });

  it('after a refused grouped command, each caller gets its own answer: nothing lost, nothing twice', async () => {
    await collection.insertOne(doc('taken'));
    database.commands.length = 0;
    const grouped = new GroupedInserts(() => collection);
    // One command: the database stores the documents before the refused one and none after it.
    const outcomes = await Promise.allSettled([
      grouped.insert([doc('x1'), doc('x2')]),
      grouped.insert([doc('y1'), doc('taken')]),
      grouped.insert([doc('z1'), doc('z2')]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(
      /duplicate key/i,
    );
    // y1 went in with the grouped command, before the refused document: it stays (its caller
    // removes what it wants gone, as after any failed insert of its own).
    expect(await stored()).toEqual(['taken', 'x1', 'x2', 'y1', 'z1', 'z2']);
    expect(inserts()[0]).toEqual(['x1', 'x2', 'y1', 'taken', 'z1', 'z2']);
  });

  it('a caller alone gets the database’s refusal as it is', async () => {
    await collection.insertOne(doc('taken'));
    const grouped = new GroupedInserts(() => collection);
    await expect(grouped.insert([doc('taken')])).rejects.toThrow(
      /duplicate key/i,
    );
    await expect(grouped.insert([doc('fine')])).resolves.toBeUndefined();
    expect(await stored()).toEqual(['fine', 'taken']);
  });

  it('when the database cannot be reached, every caller of the command is refused', async () => {
    let down = false;
    const grouped = new GroupedInserts(() => {
      if (down) throw new Error('database down');
      return collection;
    });
    const first = grouped.insert([doc('f1')]);
    await tick();
    down = true;
    const outcomes = await Promise.allSettled([
      grouped.insert([doc('g1')]),
      grouped.insert([doc('g2')]),
    ]);
    await first;
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(await stored()).toEqual(['f1']);
  });
});
