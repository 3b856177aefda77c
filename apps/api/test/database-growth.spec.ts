import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { ferretdbBinary } from './support/test-database';

const { Double, Long, ObjectId } = mongoose.mongo;
type Db = mongoose.mongo.Db;

/**
 * tools/ferretdb/patches/sqlite-index-pushdown.patch: equalities on indexed fields, counts of whole
 * collections and pages of a collection by newest `_id` are answered by SQLite's indexes, with the
 * same answers as a scan.
 */
describe('embedded database: queries that stay fast as data grows', () => {
  let dataDir: string;
  let database: EmbeddedDatabase;
  let client: mongoose.mongo.MongoClient;
  let db: Db;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'metatron-growth-'));
    database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    client = await new mongoose.mongo.MongoClient(database.uri).connect();
    db = client.db('growth');
  });

  afterAll(async () => {
    await client?.close();
    await database?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function plan(
    collection: string,
    filter: object,
  ): Promise<{ plan: string; pushdown: boolean }> {
    const answer = await db.command({
      explain: { find: collection, filter },
      verbosity: 'queryPlanner',
    });
    return {
      plan: JSON.stringify(answer['queryPlanner']),
      pushdown: answer['filterPushdown'] as boolean,
    };
  }

  async function ids(collection: string, filter: object): Promise<string[]> {
    const found = await db
      .collection(collection)
      .find(filter, { projection: { _id: 1 } })
      .toArray();
    return found.map((doc) => String(doc._id)).sort();
  }

  it('finds by an indexed field through its index, with MongoDB’s answers for arrays, number types, big numbers, null and missing fields', async () => {
    const items = db.collection<Record<string, unknown>>('items');
    const oid = new ObjectId('0102030405060708090a0b0c');
    await items.insertMany([
      { _id: 'string' as never, f: 'a' },
      { _id: 'array' as never, f: ['x', 'a'] },
      { _id: 'oid' as never, f: oid },
      { _id: 'oidHex' as never, f: '0102030405060708090a0b0c' },
      { _id: 'int32' as never, f: 1 },
      { _id: 'double' as never, f: new Double(1) },
      { _id: 'long' as never, f: Long.fromNumber(1) },
      { _id: 'onePointFive' as never, f: 1.5 },
      { _id: 'bigLong' as never, f: Long.fromString('9007199254740993') },
      { _id: 'bigDouble' as never, f: new Double(2 ** 53) },
      { _id: 'negativeZero' as never, f: new Double(-0) },
      { _id: 'zero' as never, f: 0 },
      { _id: 'numbers' as never, f: [7, 2.5] },
      { _id: 'true' as never, f: true },
      { _id: 'null' as never, f: null },
      { _id: 'missing' as never, g: 'a' },
      { _id: 'document' as never, f: { b: 'a' } },
      { _id: 'quotes' as never, f: 'say "hi" <b> & é' },
    ]);
    await items.createIndex({ f: 1 });

    for (const filter of [
      { f: 'a' },
      { f: 1 },
      { f: 'a', g: { $exists: false } },
    ]) {
      const { plan: text, pushdown } = await plan('items', filter);
      expect(text).toMatch(/USING INDEX items_.*f_1/);
      expect(pushdown).toBe(true);
    }

    expect(await ids('items', { f: 'a' })).toEqual(['array', 'string']);
    expect(await ids('items', { f: oid })).toEqual(['oid']);
    expect(await ids('items', { f: '0102030405060708090a0b0c' })).toEqual([
      'oidHex',
    ]);
    for (const one of [1, new Double(1), Long.fromNumber(1)])
      expect(await ids('items', { f: one })).toEqual([
        'double',
        'int32',
        'long',
      ]);
    expect(await ids('items', { f: 1.5 })).toEqual(['onePointFive']);
    // 2^53 + 1 is no double: it equals only itself, and 2^53 is not it.
    expect(
      await ids('items', { f: Long.fromString('9007199254740993') }),
    ).toEqual(['bigLong']);
    expect(
      await ids('items', { f: Long.fromString('9007199254740992') }),
    ).toEqual(['bigDouble']);
    expect(await ids('items', { f: new Double(2 ** 53) })).toEqual([
      'bigDouble',
    ]);
    expect(await ids('items', { f: 0 })).toEqual(['negativeZero', 'zero']);
    expect(await ids('items', { f: 7 })).toEqual(['numbers']);
    expect(await ids('items', { f: true })).toEqual(['true']);
    expect(await ids('items', { f: 'say "hi" <b> & é' })).toEqual(['quotes']);
    expect(await ids('items', { f: 'nobody' })).toEqual([]);
    // Not pushed down, still answered right: null also matches a missing field, paths, operators.
    expect(await ids('items', { f: null })).toEqual(['missing', 'null']);
    expect(await ids('items', { 'f.b': 'a' })).toEqual(['document']);
    expect(await ids('items', { f: { $in: ['a', true] } })).toEqual([
      'array',
      'string',
      'true',
    ]);
    expect(await items.countDocuments({ f: 1 })).toBe(3);
    // Updates and deletes go through the same lookup.
    await items.updateMany({ f: 'a' }, { $set: { seen: true } });
    expect(await ids('items', { seen: true })).toEqual(['array', 'string']);
    await items.deleteMany({ f: 1 });
    expect(await ids('items', { f: new Double(1) })).toEqual([]);
  });

  it('finds by the leading field of a compound index through that index', async () => {
    const messages = db.collection('messages');
    const chats = [new ObjectId(), new ObjectId()];
    await messages.insertMany(
      Array.from({ length: 40 }, (_, i) => ({
        chatId: chats[i % 2],
        n: i,
      })),
    );
    await messages.createIndex({ chatId: 1, _id: -1 });
    const { plan: text, pushdown } = await plan('messages', {
      chatId: chats[1],
    });
    expect(text).toMatch(/USING INDEX messages_.*chatId_1__id_-1/);
    expect(pushdown).toBe(true);
    const page = await messages
      .find({ chatId: chats[1] })
      .sort({ _id: -1 })
      .limit(5)
      .toArray();
    expect(page.map((m) => m['n'])).toEqual([39, 37, 35, 33, 31]);
  });

  it('pages one chat newest first from the index, and still right when the field holds arrays or look-alike strings', async () => {
    const pages = db.collection<Record<string, unknown>>('pages');
    await pages.createIndex({ chatId: 1, _id: -1 });
    const chat = new ObjectId();
    const other = new ObjectId();
    const ids = Array.from({ length: 12 }, () => new ObjectId());
    await pages.insertMany(
      ids.map((_id, n) => ({ _id, chatId: n % 3 === 2 ? other : chat, n })),
    );
    const page = async (filter: object, skip: number, limit: number) =>
      (
        await pages
          .find(filter, { sort: { _id: -1 }, skip, limit, maxTimeMS: 5000 })
          .toArray()
      ).map((doc) => doc['n']);
    expect(await page({ chatId: chat }, 0, 3)).toEqual([10, 9, 7]);
    expect(await page({ chatId: chat }, 2, 3)).toEqual([7, 6, 4]);
    expect(await page({ chatId: chat, n: { $lt: 8 } }, 0, 2)).toEqual([7, 6]);
    expect(await page({ chatId: other, 'x.y': null }, 0, 2)).toEqual([11, 8]);

    // Newer documents that the index condition lets through and MongoDB's rules decide on.
    await pages.insertMany([
      { _id: new ObjectId(), chatId: chat.toHexString(), n: 100 },
      { _id: new ObjectId(), chatId: [other, chat], n: 101 },
    ]);
    expect(await page({ chatId: chat }, 0, 3)).toEqual([101, 10, 9]);
    expect(await page({ chatId: chat.toHexString() }, 0, 3)).toEqual([100]);
  });

  it('counts whole collections exactly (count(*)), also after deletes and when empty', async () => {
    const notes = db.collection('notes');
    expect(await notes.countDocuments({})).toBe(0);
    await notes.insertMany(
      Array.from({ length: 25 }, (_, i) => ({ n: i, odd: i % 2 === 1 })),
    );
    await notes.deleteMany({ n: { $lt: 5 } });
    expect(await notes.countDocuments({})).toBe(20);
    expect(await notes.countDocuments()).toBe(20);
    expect(await notes.estimatedDocumentCount()).toBe(20);
    expect(await notes.countDocuments({ odd: true })).toBe(10);
    expect(await notes.countDocuments({}, { skip: 15 })).toBe(5);
    expect(await notes.countDocuments({}, { limit: 3 })).toBe(3);
    expect(
      await notes
        .aggregate([{ $group: { _id: null, total: { $sum: 1 } } }])
        .toArray(),
    ).toEqual([{ _id: null, total: 20 }]);
    expect(
      await notes
        .aggregate([{ $group: { _id: '$odd', total: { $sum: 1 } } }])
        .toArray()
        .then((groups) => groups.length),
    ).toBe(2);
    expect(await db.collection('never_created').countDocuments({})).toBe(0);
  });

  it('counts and pages a large collection without reading every document', async () => {
    const big = db.collection('big');
    for (let batch = 0; batch < 20; batch++)
      await big.insertMany(
        Array.from({ length: 1000 }, (_, i) => ({
          n: batch * 1000 + i,
          text: 'lorem ipsum dolor sit amet '.repeat(4),
        })),
      );
    // Reading 20,000 documents takes well over a second here (it did before the patch: MaxTimeMSExpired).
    const limits = { maxTimeMS: 150 };
    expect(await big.countDocuments({}, limits)).toBe(20_000);
    const page = await big
      .find({}, { sort: { _id: -1 }, skip: 100, limit: 50, ...limits })
      .toArray();
    expect(page.map((doc) => doc['n'])).toEqual(
      Array.from({ length: 50 }, (_, i) => 19_899 - i),
    );
  });

  it('pages a collection newest _id first in BSON order, also when _ids mix types', async () => {
    const oids = Array.from({ length: 30 }, () => new ObjectId());
    const plain = db.collection('plain');
    await plain.insertMany(oids.map((_id, n) => ({ _id, n })));
    const newest = [...oids].reverse().map(String);
    const page = async (name: string, skip: number, limit: number) =>
      (
        await db
          .collection(name)
          .find({}, { sort: { _id: -1 }, skip, limit })
          .toArray()
      ).map((doc) => String(doc._id));
    expect(await page('plain', 0, 10)).toEqual(newest.slice(0, 10));
    expect(await page('plain', 25, 10)).toEqual(newest.slice(25));

    // BSON order, descending: ObjectIds, then strings, then numbers.
    const mixed = db.collection<Record<string, unknown>>('mixed');
    await mixed.insertMany([
      { _id: 'zz' as never },
      { _id: 'ffffffffffffffffffffffff' as never },
      { _id: 'a<b' as never },
      { _id: 'a"b' as never },
      { _id: 'a=b' as never },
      { _id: 10 as never },
      { _id: 9 as never },
      { _id: oids[0] as never },
      { _id: oids[1] as never },
    ]);
    expect(await page('mixed', 0, 20)).toEqual([
      String(oids[1]),
      String(oids[0]),
      'zz',
      'ffffffffffffffffffffffff',
      'a=b',
      'a<b',
      'a"b',
      '10',
      '9',
    ]);
    expect(await page('mixed', 1, 2)).toEqual([String(oids[0]), 'zz']);

    // Strings only (no ObjectId): the page still follows BSON order, not the JSON text.
    const strings = db.collection<Record<string, unknown>>('strings');
    await strings.insertMany(
      ['b', 'a"', 'a<', 'a=', 'c'].map((_id) => ({ _id: _id as never })),
    );
    expect(await page('strings', 0, 3)).toEqual(['c', 'b', 'a=']);
  });
});
