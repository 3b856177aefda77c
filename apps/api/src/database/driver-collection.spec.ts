import {
  MongoNetworkError,
  MongoServerError,
  ObjectId,
  type Collection,
  type Document,
} from 'mongodb';
import {
  TEST_MONGODB_URI_ENV,
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../test/support/test-database';
import {
  aggregateAll,
  countAll,
  driverCollection,
  findAll,
  stopUsingEmbeddedWire,
  updateEach,
  useEmbeddedWire,
} from './driver-collection';
import { DUPLICATE_KEY } from './duplicate-key';
import { EmbeddedWire, embeddedWireAddress } from './embedded-wire';
import { insertUnordered } from './unordered-insert';

interface Doc {
  _id: string | ObjectId;
  n?: number;
  u?: string;
  at?: Date;
  tags?: string[];
  gone?: null;
}

/**
 * One contract, two ways to the embedded database: `driverCollection`'s writes through the driver,
 * and through the embedded wire. Both must store the same documents and answer the same results
 * and errors.
 */
describe.each(['driver', 'wire'] as const)(
  'driverCollection writes (%s)',
  (way) => {
    let database: WatchedTestDatabase;
    let raw: Collection<Doc>;
    let collection: Collection<Doc>;
    let wire: EmbeddedWire | undefined;

    beforeAll(async () => {
      database = await watchedTestDatabase(`test_driver_collection_${way}`);
      raw = database.db.collection<Doc>('docs');
      await raw.createIndex({ u: 1 }, { unique: true, sparse: true });
      if (way === 'wire') {
        const address = embeddedWireAddress(
          process.env[TEST_MONGODB_URI_ENV] as string,
        );
        if (!address) throw new Error('the test database has no wire address');
        wire = new EmbeddedWire(address);
        useEmbeddedWire(database.client, wire);
      }
      collection = driverCollection(raw);
    });
    afterAll(async () => {
      stopUsingEmbeddedWire(database.client);
      wire?.close();
      await database.close();
    });
    beforeEach(() => raw.deleteMany({}));

    /** How many commands of `name` went through the driver during `run`. */
    const viaDriver = async (name: string, run: () => Promise<unknown>) => {
      database.commands.length = 0;
      await run();
      return database.count(name);
    };
    const stored = async () => raw.find({}).sort({ _id: 1 }).toArray();

    it('takes the wire only on the embedded database it was given', () => {
      expect(collection === raw).toBe(way === 'driver');
      expect(driverCollection(raw)).toBe(collection);
    });

    it('inserts documents in order and answers their ids', async () => {
      const at = new Date('2026-11-30T08:00:00.000Z');
      let result: unknown;
      const sent = await viaDriver('insert', async () => {
        result = await collection.insertMany([
          { _id: 'a', n: 1, at, tags: ['x'] },
          { _id: 'b', n: 2 },
        ]);
      });
      expect(sent).toBe(way === 'driver' ? 1 : 0);
      expect(result).toEqual({
        acknowledged: true,
        insertedCount: 2,
        insertedIds: { 0: 'a', 1: 'b' },
      });
      expect(await stored()).toEqual([
        { _id: 'a', n: 1, at, tags: ['x'] },
        { _id: 'b', n: 2 },
      ]);
    });

    it('refuses a taken key with its code; ordered stops there, unordered stores the rest', async () => {
      const three = (): Doc[] =>
        ['a', 'b', 'c'].map((_id, i) => ({ _id, n: i + 1 }));
      await raw.insertOne({ _id: 'b', n: 0 });
      const ordered = await collection
        .insertMany(three())
        .catch((error: unknown) => error);
      expect(ordered).toBeInstanceOf(MongoServerError);
      expect(ordered).toMatchObject({ code: DUPLICATE_KEY });
      expect((await stored()).map((d) => d._id)).toEqual(['a', 'b']);

      await raw.deleteMany({ _id: { $ne: 'b' } });
      const refused = await insertUnordered(collection, three());
      expect(refused.map(({ index, code }) => [index, code])).toEqual([
        [1, DUPLICATE_KEY],
      ]);
      expect((await stored()).map((d) => d.n)).toEqual([1, 0, 3]);
    });

    it('leaves a document without _id to the driver, which gives it one', async () => {
      const docs = [{ n: 1 }] as Doc[];
      const sent = await viaDriver('insert', () => collection.insertMany(docs));
      expect(sent).toBe(1);
      expect(docs[0]._id).toBeInstanceOf(ObjectId);
      expect(await stored()).toEqual([{ _id: docs[0]._id, n: 1 }]);
    });

    it('sends a batch too large for one command section through the driver, whole', async () => {
      const big = 'x'.repeat(9 * 1024 * 1024);
      const sent = await viaDriver('insert', () =>
        collection.insertMany([
          { _id: 'a', u: big },
          { _id: 'b', u: `${big}!` },
        ]),
      );
      expect(sent).toBeGreaterThan(0);
      const docs = await raw.find({}, { projection: { _id: 1 } }).toArray();
      expect(docs).toEqual([{ _id: 'a' }, { _id: 'b' }]);
    });

    it('updates one document, stores undefined as null, and counts a miss as none matched', async () => {
      await raw.insertMany([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 1 },
      ]);
      let result: unknown;
      const sent = await viaDriver('update', async () => {
        result = await collection.updateOne(
          { _id: 'a' },
          { $set: { n: 5, gone: undefined } },
        );
      });
      expect(sent).toBe(way === 'driver' ? 1 : 0);
      expect(result).toEqual({
        acknowledged: true,
        matchedCount: 1,
        modifiedCount: 1,
        upsertedCount: 0,
        upsertedId: null,
      });
      expect(
        await collection.updateOne({ _id: 'zz' }, { $set: { n: 9 } }),
      ).toEqual({
        acknowledged: true,
        matchedCount: 0,
        modifiedCount: 0,
        upsertedCount: 0,
        upsertedId: null,
      });
      expect(await stored()).toEqual([
        { _id: 'a', n: 5, gone: null },
        { _id: 'b', n: 1 },
      ]);
    });

    it('upserts with $inc and $setOnInsert: inserts once, then adds', async () => {
      const upsert = () =>
        collection.updateOne(
          { _id: 'day' },
          { $inc: { n: 2 }, $setOnInsert: { u: 'first' } },
          { upsert: true },
        );
      expect(await upsert()).toEqual({
        acknowledged: true,
        matchedCount: 0,
        modifiedCount: 0,
        upsertedCount: 1,
        upsertedId: 'day',
      });
      expect(await upsert()).toMatchObject({
        matchedCount: 1,
        modifiedCount: 1,
        upsertedCount: 0,
      });
      expect(await stored()).toEqual([{ _id: 'day', n: 4, u: 'first' }]);
    });

    it('refuses an update that takes a unique value with its code, and changes nothing', async () => {
      await raw.insertMany([
        { _id: 'a', u: 'one' },
        { _id: 'b', u: 'two' },
      ]);
      const error = await collection
        .updateOne({ _id: 'b' }, { $set: { u: 'one' } })
        .catch((e: unknown) => e);
      // FerretDB answers this one with code 1 and its own message, through either way.
      expect(error).toBeInstanceOf(MongoServerError);
      expect((error as MongoServerError).message).toMatch(
        /UNIQUE constraint failed/,
      );
      expect(await stored()).toEqual([
        { _id: 'a', u: 'one' },
        { _id: 'b', u: 'two' },
      ]);
    });

    it('updateEach sets each document in one command; one that matches nothing is no error', async () => {
      await raw.insertMany([
        { _id: 'a', n: 0 },
        { _id: 'b', n: 0 },
      ]);
      const sent = await viaDriver('update', () =>
        updateEach(collection, [
          { filter: { _id: 'a' }, set: { n: 1 } },
          { filter: { _id: 'b' }, set: { n: 2 } },
          { filter: { _id: 'c' }, set: { n: 3 } },
        ]),
      );
      expect(sent).toBe(way === 'driver' ? 1 : 0);
      expect(await stored()).toEqual([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2 },
      ]);
    });

    it('updateEach rejects when a write is refused', async () => {
      await raw.insertMany([
        { _id: 'a', u: 'one' },
        { _id: 'b', u: 'two' },
      ]);
      await expect(
        updateEach(collection, [
          { filter: { _id: 'a' }, set: { n: 1 } },
          { filter: { _id: 'b' }, set: { u: 'one' } },
        ]),
      ).rejects.toBeInstanceOf(MongoServerError);
      expect((await raw.findOne({ _id: 'b' }))?.u).toBe('two');
    });

    it('sends the writes of a collection kept by a caller through the driver once the wire is stopped', async () => {
      stopUsingEmbeddedWire(database.client);
      try {
        expect(
          await viaDriver('insert', () =>
            collection.insertMany([{ _id: 'a', n: 1 }]),
          ),
        ).toBe(1);
        expect(
          await viaDriver('update', () =>
            updateEach(collection, [{ filter: { _id: 'a' }, set: { n: 2 } }]),
          ),
        ).toBe(1);
        expect(await stored()).toEqual([{ _id: 'a', n: 2 }]);
      } finally {
        if (wire) useEmbeddedWire(database.client, wire);
      }
    });

    it('finds with a filter, sort, projection, skip and limit as find().toArray() does', async () => {
      const at = new Date('2026-11-30T09:00:00.000Z');
      const id = new ObjectId();
      await raw.insertMany([
        { _id: 'a', n: 1, tags: ['x'] },
        { _id: 'b', n: 2, at, tags: ['y'] },
        { _id: 'c', n: 3, gone: null },
        { _id: id, n: 4, u: 'one' },
        { _id: 'e', n: 5 },
      ]);
      const options = {
        sort: { n: -1 as const },
        projection: { tags: 0 },
        skip: 1,
        limit: 3,
        maxTimeMS: 5000,
      };
      let docs: Doc[] = [];
      const sent = await viaDriver('find', async () => {
        docs = await findAll(collection, { n: { $gte: 2 } }, options);
      });
      expect(sent).toBe(way === 'wire' ? 0 : 1);
      expect(docs).toEqual([
        { _id: id, n: 4, u: 'one' },
        { _id: 'c', n: 3, gone: null },
        { _id: 'b', n: 2, at },
      ]);
      expect(docs[0]._id).toBeInstanceOf(ObjectId);
      expect(docs[2].at).toBeInstanceOf(Date);
      expect(docs).toEqual(
        await raw.find({ n: { $gte: 2 } }, options).toArray(),
      );
      expect(await findAll(collection, { n: 9 })).toEqual([]);
    });

    it('reads every batch of a long result, and stops at its limit', async () => {
      const docs = Array.from({ length: 230 }, (_, i) => ({
        _id: `d${String(i).padStart(3, '0')}`,
        n: i,
      }));
      await raw.insertMany(docs);
      let all: Doc[] = [];
      const viaWire = wire && jest.spyOn(wire, 'command');
      const sent = await viaDriver('getMore', async () => {
        all = await findAll(collection, {}, { sort: { _id: 1 } });
      });
      // The first batch holds 101 documents, as the driver's does.
      expect(sent).toBe(way === 'wire' ? 0 : 1);
      if (viaWire) {
        expect(
          viaWire.mock.calls.filter(([, command]) => 'getMore' in command),
        ).toHaveLength(1);
        viaWire.mockRestore();
      }
      expect(all).toEqual(docs);
      expect(
        await findAll(collection, {}, { sort: { n: 1 }, limit: 150 }),
      ).toEqual(docs.slice(0, 150));
      expect(
        await findAll(collection, {}, { sort: { n: 1 }, limit: 101 }),
      ).toEqual(docs.slice(0, 101));
      expect(
        await findAll(collection, {}, { sort: { n: -1 }, skip: 200 }),
      ).toEqual(docs.slice(0, 30).reverse());
    });

    it("refuses a query the database refuses with the driver's error", async () => {
      await raw.insertMany([{ _id: 'a', n: 1 }]);
      const refusal = await raw
        .find({ n: { $nope: 1 } } as never)
        .toArray()
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(MongoServerError);
      const error = await findAll(collection, {
        n: { $nope: 1 },
      } as never).catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(MongoServerError);
      expect((error as MongoServerError).code).toBe(
        (refusal as MongoServerError).code,
      );
      expect((error as MongoServerError).message).toBe(
        (refusal as MongoServerError).message,
      );
    });

    it('reads again once after a broken connection, as the driver retries a read', async () => {
      await raw.insertMany([{ _id: 'a', n: 1 }]);
      if (wire) {
        const sent = jest
          .spyOn(wire, 'command')
          .mockRejectedValueOnce(new MongoNetworkError('broken'));
        expect(await findAll(collection, {})).toEqual([{ _id: 'a', n: 1 }]);
        expect(sent).toHaveBeenCalledTimes(2);
        sent
          .mockRejectedValueOnce(new MongoNetworkError('broken'))
          .mockRejectedValueOnce(new MongoNetworkError('still broken'));
        await expect(findAll(collection, {})).rejects.toThrow('still broken');
        sent.mockRestore();
      } else
        expect(await findAll(collection, {})).toEqual([{ _id: 'a', n: 1 }]);
    });

    it('aggregates and counts as aggregate().toArray() and countDocuments() do', async () => {
      const docs = Array.from({ length: 130 }, (_, i) => ({
        _id: `d${String(i).padStart(3, '0')}`,
        n: i % 4,
      }));
      await raw.insertMany(docs);
      const groups = [
        { $group: { _id: '$n', count: { $sum: 1 } } },
        { $sort: { _id: -1 } },
      ];
      let grouped: Document[] = [];
      expect(
        await viaDriver('aggregate', async () => {
          grouped = await aggregateAll(collection, groups, {
            maxTimeMS: 5000,
          });
        }),
      ).toBe(way === 'wire' ? 0 : 1);
      expect(grouped).toEqual([
        { _id: 3, count: 32 },
        { _id: 2, count: 32 },
        { _id: 1, count: 33 },
        { _id: 0, count: 33 },
      ]);
      // Past the first batch of 101.
      const all = await aggregateAll(collection, [{ $sort: { _id: 1 } }]);
      expect(all).toEqual(docs);
      expect(all).toEqual(
        await raw.aggregate([{ $sort: { _id: 1 } }]).toArray(),
      );
      for (const [filter, options] of [
        [{}, {}],
        [{ n: 1 }, {}],
        [{ n: { $gte: 2 } }, { skip: 10, limit: 20 }],
        [{ n: 9 }, {}],
      ] as const) {
        let count = -1;
        expect(
          await viaDriver('aggregate', async () => {
            count = await countAll(collection, filter, options);
          }),
        ).toBe(way === 'wire' ? 0 : 1);
        expect(count).toBe(await raw.countDocuments(filter, options));
      }
      const refused = (await raw
        .aggregate([{ $nope: 1 }])
        .toArray()
        .catch((error: unknown) => error)) as MongoServerError;
      const error = (await aggregateAll(collection, [{ $nope: 1 }]).catch(
        (failure: unknown) => failure,
      )) as MongoServerError;
      expect(error).toBeInstanceOf(MongoServerError);
      expect([error.code, error.message]).toEqual([
        refused.code,
        refused.message,
      ]);
    });

    it('leaves a pipeline that writes to the driver', async () => {
      await raw.insertMany([{ _id: 'a', n: 1 }]);
      // The embedded database has no $out ("not implemented yet"): what matters is who sent it.
      for (const last of [{ $out: 'docs_copy' }, { $merge: 'docs_copy' }])
        expect(
          await viaDriver('aggregate', () =>
            aggregateAll(collection, [{ $match: {} }, last]).catch(
              () => undefined,
            ),
          ),
        ).toBe(1);
    });

    it('leaves a sort the driver translates, and a negative limit, to the driver', async () => {
      await raw.insertMany([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2 },
      ]);
      let docs: Doc[] = [];
      expect(
        await viaDriver('find', async () => {
          docs = await findAll(collection, {}, { sort: { n: 'desc' } });
        }),
      ).toBe(1);
      expect(docs.map((doc) => doc._id)).toEqual(['b', 'a']);
      expect(
        await viaDriver('find', async () => {
          docs = await findAll(collection, {}, { sort: { n: 1 }, limit: -1 });
        }),
      ).toBe(1);
      expect(docs.map((doc) => doc._id)).toEqual(['a']);
    });

    it('leaves other writes to the driver: options it does not know, and bulkWrite', async () => {
      await raw.insertMany([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 1 },
      ]);
      expect(
        await viaDriver('update', () =>
          collection.updateOne(
            { _id: 'b' },
            { $set: { n: 8 } },
            { comment: 'why' },
          ),
        ),
      ).toBe(1);
      expect(
        await viaDriver('delete', () =>
          collection.bulkWrite([
            { updateOne: { filter: { _id: 'a' }, update: { $inc: { n: 1 } } } },
            { deleteOne: { filter: { _id: 'b' } } },
          ]),
        ),
      ).toBe(1);
      expect(await stored()).toEqual([{ _id: 'a', n: 2 }]);
    });
  },
);
