import type { Collection } from 'mongodb';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import { DUPLICATE_KEY } from './duplicate-key';
import { insertUnordered } from './unordered-insert';

describe('insertUnordered (one unordered insert, the refusals by index)', () => {
  let database: WatchedTestDatabase;
  let collection: Collection<{ _id: string; n: number }>;

  beforeAll(async () => {
    database = await watchedTestDatabase('test_unordered_insert');
    collection = database.db.collection('docs');
  });
  afterAll(() => database.close());
  beforeEach(() => collection.deleteMany({}));

  const ids = async () =>
    (await collection.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id);

  it('stores every document in one command and answers no refusal', async () => {
    database.commands.length = 0;
    expect(
      await insertUnordered(collection, [
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2 },
      ]),
    ).toEqual([]);
    expect(database.count('insert')).toBe(1);
    expect(await ids()).toEqual(['a', 'b']);
  });

  it('answers a taken key by its index and stores the others', async () => {
    await collection.insertOne({ _id: 'b', n: 0 });
    const refused = await insertUnordered(collection, [
      { _id: 'a', n: 1 },
      { _id: 'b', n: 2 },
      { _id: 'c', n: 3 },
    ]);
    expect(refused.map(({ index, code }) => ({ index, code }))).toEqual([
      { index: 1, code: DUPLICATE_KEY },
    ]);
    expect(await ids()).toEqual(['a', 'b', 'c']);
    expect((await collection.findOne({ _id: 'b' }))?.n).toBe(0);
  });

  it('sends nothing for no documents', async () => {
    database.commands.length = 0;
    expect(await insertUnordered(collection, [])).toEqual([]);
    expect(database.count('insert')).toBe(0);
  });
});
