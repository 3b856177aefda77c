import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { ferretdbBinary } from './support/test-database';

const { Binary, Double, EJSON, Long, ObjectId } = mongoose.mongo.BSON;
type Db = mongoose.mongo.Db;
type Doc = Record<string, unknown>;
type Filter = Record<string, unknown>;

/**
 * Differential test of tools/ferretdb/patches/sqlite-index-pushdown.patch (and the `_id` pushdown of
 * sqlite-id-index.patch): the same seeded pseudo-random documents go into two collections, one with
 * secondary indexes (equalities on indexed fields become SQL conditions) and one without. Every
 * random query runs on the indexed collection as written, and on the plain collection in a form no
 * pushdown touches (the filter wrapped in `$and`, a sort with a second key, a counting filter that is
 * not empty), and the answers must be identical: documents (BSON types included), order and counts.
 *
 * `PUSHDOWN_SEED=<n>` replays a run; a failure names its seed and the queries that differed.
 */
const SEED = Number(process.env['PUSHDOWN_SEED'] ?? 20261125);
const DOCUMENTS = Number(process.env['PUSHDOWN_DOCUMENTS'] ?? 400);
const QUERIES = Number(process.env['PUSHDOWN_QUERIES'] ?? 80);
const MUTATIONS = 20;

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Random {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) {
      s += this.int(256).toString(16).padStart(2, '0');
    }
    return s;
  }
}

const OIDS = [
  new ObjectId('0102030405060708090a0b0c'),
  new ObjectId('ffffffffffffffffffffff00'),
  new ObjectId('65a000000000000000000001'),
  new ObjectId('65a000000000000000000002'),
];

// FerretDB 1.24 stores neither NaN (the connection is closed) nor infinities nor arrays in arrays;
// infinities are still looked for in queries.
const QUERY_ONLY: readonly unknown[] = [
  new Double(Infinity),
  new Double(-Infinity),
];

/** Scalars chosen for the ways the pushdown spells values: number types, big and special numbers, look-alikes. */
const SCALARS: readonly unknown[] = [
  'a',
  'b',
  'A',
  '',
  'é',
  'say "hi" <b>',
  'line\u2028sep',
  'YQ==', // the base64 text of the binary below
  '0102030405060708090a0b0c', // the hex digits of OIDS[0]
  '1',
  'true',
  'null',
  -1,
  0,
  1,
  2,
  7,
  Long.fromNumber(0),
  Long.fromNumber(1),
  Long.fromNumber(2),
  Long.fromString('9007199254740992'), // 2^53
  Long.fromString('9007199254740993'), // 2^53 + 1, no double equals it
  Long.fromString('-9007199254740993'),
  Long.MAX_VALUE,
  Long.MIN_VALUE,
  new Double(0),
  new Double(-0),
  new Double(1),
  1.5,
  new Double(2 ** 53),
  new Double(2 ** 53 + 2),
  new Double(1e21),
  new Double(1e-7),
  0.1,
  new Double(-(2 ** 63)),
  new Double(2 ** 63),
  true,
  false,
  null,
  ...OIDS,
  new Date(0),
  new Date(1),
  new Date(1700000000000),
  new Binary(Buffer.from('a')),
];

function scalar(r: Random): unknown {
  return r.pick(SCALARS);
}

/** Any value a field can hold: scalars, arrays (of scalars, nested, of documents), documents. */
function value(r: Random): unknown {
  const kind = r.int(20);
  if (kind < 12) return scalar(r);
  if (kind < 15) return Array.from({ length: r.int(4) }, () => scalar(r));
  if (kind === 15) return [scalar(r), { b: [scalar(r)] }];
  if (kind === 16) return [{ b: scalar(r) }, { b: scalar(r) }];
  if (kind === 17) return { b: scalar(r) };
  if (kind === 18) return {};
  return [];
}

type Scenario = 'mixed' | 'stringish' | 'oids';

/** `_id`s of one scenario: mixed BSON types, string-like JSON texts only, or ObjectIDs (the app's case). */
function makeId(r: Random, scenario: Scenario, i: number): unknown {
  const oid = () =>
    new ObjectId(
      `65${r.hex(3)}${String(i).padStart(6, '0')}${r.hex(5)}`.slice(0, 24),
    );
  if (scenario === 'oids') return oid();
  if (scenario === 'stringish') {
    switch (r.int(5)) {
      case 0:
        return `s${i}`;
      case 1:
        return `zz${i}`; // sorts above every ObjectID's hex digits as text
      case 2:
        return new Binary(Buffer.from(`bin${i}`));
      default:
        return oid();
    }
  }
  switch (r.int(7)) {
    case 0:
      return i;
    case 1:
      return Long.fromNumber(1_000_000 + i);
    case 2:
      return new Double(2_000_000 + i + 0.5);
    case 3:
      return `s${i}`;
    case 4:
      return new Date(3_000_000_000 + i);
    case 5:
      return { k: i };
    default:
      return oid();
  }
}

function makeDocument(r: Random, scenario: Scenario, i: number): Doc {
  const doc: Doc = { _id: makeId(r, scenario, i) };
  const maybe = (field: string, make: () => unknown, p = 0.85) => {
    if (r.chance(p)) doc[field] = make();
  };
  maybe('f', () => value(r));
  maybe('g', () =>
    r.pick([true, false, 'a', 'b', 1, new Double(1), null, ['a', true]]),
  );
  maybe('n', () => (r.chance(0.8) ? scalar(r) : value(r)));
  maybe('s', () => r.pick(['x', 'y', 'z', 1, Long.fromNumber(1), OIDS[0]]));
  maybe('t', () => value(r));
  maybe('c', () =>
    r.chance(0.7)
      ? r.pick(OIDS)
      : r.pick([OIDS[0].toHexString(), [OIDS[1]], 'c', null]),
  );
  maybe('a', () => (r.chance(0.7) ? { b: scalar(r), d: scalar(r) } : value(r)));
  maybe('u', () => value(r));
  return doc;
}

/** The secondary indexes of the indexed collection; the plain collection has only `_id`'s. */
const INDEXES: Array<Record<string, 1 | -1>> = [
  { f: 1 },
  { g: -1 },
  { n: 1 },
  { s: 1, t: 1 },
  { c: 1, _id: -1 },
  { 'a.b': 1 },
];
const FIELDS = ['f', 'g', 'n', 's', 't', 'c', 'a', 'a.b', 'u', '_id'];

interface Query {
  filter: Filter;
  sort?: Record<string, 1 | -1>;
  skip?: number;
  limit?: number;
}

function fieldValue(doc: Doc, field: string): unknown {
  if (field === 'a.b') {
    const a = doc['a'];
    return a && typeof a === 'object' && !Array.isArray(a)
      ? (a as Doc)['b']
      : undefined;
  }
  return doc[field];
}

/** The numeric value of a number of any BSON type, or undefined. */
function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof Double) return v.value;
  if (v instanceof Long) return v.toBigInt();
  return undefined;
}

/**
 * A value that equals v in another BSON type (1 / 1.0 / Long(1), 0 / -0), or that only looks
 * like it in the stored JSON (an ObjectID's hex digits, a binary's base64, a date's milliseconds).
 */
function twin(r: Random, v: unknown): unknown {
  const n = numeric(v);
  if (n !== undefined) {
    const big =
      typeof n === 'bigint' ? n : Number.isInteger(n) ? BigInt(n) : undefined;
    if (big === undefined) return v;
    const options: unknown[] = [Long.fromBigInt(big)];
    if (Number(big) === Number(big) && BigInt(Number(big)) === big)
      options.push(new Double(Number(big)));
    if (big >= -(2n ** 31n) && big < 2n ** 31n) options.push(Number(big));
    if (big === 0n) options.push(new Double(-0));
    return r.pick(options);
  }
  if (v instanceof ObjectId) return v.toHexString();
  if (v instanceof Binary) return Buffer.from(v.buffer).toString('base64');
  if (v instanceof Date) return Long.fromNumber(v.getTime());
  return v;
}

/** A value to look for: usually one some document holds (so that queries find things), else any. */
function queryValue(r: Random, docs: Doc[], field: string): unknown {
  if (r.chance(0.6)) {
    let v = fieldValue(r.pick(docs), field);
    if (v !== undefined) {
      if (Array.isArray(v) && v.length > 0 && r.chance(0.6)) v = r.pick(v);
      return r.chance(0.4) ? twin(r, v) : v;
    }
  }
  if (r.chance(0.05)) return r.pick(QUERY_ONLY);
  return field === '_id' ? makeId(r, 'mixed', r.int(DOCUMENTS)) : value(r);
}

function makeFilter(r: Random, docs: Doc[]): Filter {
  const filter: Filter = {};
  const keys = r.pick([0, 1, 1, 1, 2, 2, 3]);
  for (let i = 0; i < keys; i++) {
    const field = r.chance(0.6)
      ? r.pick(['f', 'g', 'n', 's', 'c'])
      : r.pick(FIELDS);
    const v = queryValue(r, docs, field);
    const form = r.int(10);
    if (form < 5) filter[field] = v;
    else if (form === 5) filter[field] = { $eq: v };
    else if (form === 6)
      filter[field] = { $in: [v, queryValue(r, docs, field)] };
    else if (form === 7) filter[field] = { $ne: v };
    else if (form === 8) filter[field] = { $exists: r.chance(0.5) };
    else filter[field] = { $in: [v] };
  }
  return filter;
}

function makeQuery(r: Random, docs: Doc[]): Query {
  const query: Query = { filter: makeFilter(r, docs) };
  const sort = r.int(5);
  if (sort < 3) query.sort = { _id: -1 };
  else if (sort === 3) query.sort = { _id: 1 };
  if (query.sort) {
    if (r.chance(0.5)) query.skip = r.pick([0, 1, 5, 30]);
    if (r.chance(0.9)) query.limit = r.pick([1, 2, 10, 50, 400]);
  }
  return query;
}

/** The filter in a form no pushdown takes apart (a top-level `$and`), with the same matches. */
function untouchable(filter: Filter): Filter {
  return { $and: [filter, { _id: { $exists: true } }] };
}

/** A sort with the same order (`_id`s are unique, `zzNone` is missing) that no `_id`-page shortcut takes. */
function untouchableSort(sort: Record<string, 1 | -1>): Record<string, 1 | -1> {
  return { ...sort, zzNone: 1 };
}

function show(value: unknown): string {
  return EJSON.stringify(value, { relaxed: false });
}

function showSet(docs: Doc[]): string[] {
  return docs.map(show).sort();
}

describe('embedded database: the pushdown never changes an answer (differential, seeded)', () => {
  let dataDir: string;
  let database: EmbeddedDatabase;
  let client: mongoose.mongo.MongoClient;
  let db: Db;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'metatron-pushdown-'));
    database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    client = await new mongoose.mongo.MongoClient(database.uri).connect();
    db = client.db('pushdown');
  });

  afterAll(async () => {
    await client?.close();
    await database?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function pushedDown(
    collection: string,
    filter: Filter,
  ): Promise<boolean> {
    const answer = await db.command({
      explain: { find: collection, filter },
      verbosity: 'queryPlanner',
    });
    return answer['filterPushdown'] as boolean;
  }

  /** Runs one scenario: returns the differences (empty when every answer agreed) and how often the pushdown was used. */
  async function differential(scenario: Scenario, seed: number) {
    const r = new Random(seed);
    const indexed = db.collection<Doc>(`${scenario}_indexed`);
    const plain = db.collection<Doc>(`${scenario}_plain`);
    await indexed.drop().catch(() => undefined);
    await plain.drop().catch(() => undefined);
    for (const key of INDEXES) await indexed.createIndex(key);

    const docs: Doc[] = [];
    const seen = new Set<string>();
    for (let i = 0; docs.length < DOCUMENTS; i++) {
      const doc = makeDocument(r, scenario, i);
      const id = show(doc['_id']);
      if (!seen.has(id)) {
        seen.add(id);
        docs.push(doc);
      }
    }
    // the same documents in the same order (insertMany would add nothing to them: every one has its _id)
    await indexed.insertMany(docs.map((d) => ({ ...d })));
    await plain.insertMany(docs.map((d) => ({ ...d })));

    const differences: string[] = [];
    let pushed = 0;
    let nonEmpty = 0;
    let total = 0;

    const compare = (what: string, got: unknown, want: unknown) => {
      total++;
      const g = show(got);
      const w = show(want);
      if (g !== w) {
        differences.push(
          `${scenario} seed ${seed}: ${what}\n  indexed: ${g.slice(0, 600)}\n  reference: ${w.slice(0, 600)}`,
        );
      }
    };

    const runQueries = async (count: number) => {
      for (let q = 0; q < count; q++) {
        const query = makeQuery(r, docs);
        const label = `find ${show(query)}`;
        if (await pushedDown(indexed.collectionName, query.filter)) pushed++;
        if (q % 10 === 0) {
          expect(
            await pushedDown(plain.collectionName, untouchable(query.filter)),
          ).toBe(false);
        }

        const run = (
          coll: typeof indexed,
          filter: Filter,
          sort?: Record<string, 1 | -1>,
        ) => {
          let cursor = coll.find(filter);
          if (sort) cursor = cursor.sort(sort);
          if (query.skip !== undefined) cursor = cursor.skip(query.skip);
          if (query.limit !== undefined) cursor = cursor.limit(query.limit);
          return cursor.toArray();
        };
        const got = await run(indexed, query.filter, query.sort);
        const want = await run(
          plain,
          untouchable(query.filter),
          query.sort && untouchableSort(query.sort),
        );
        if (want.length > 0) nonEmpty++;
        // without a sort the order is the storage's (the index's when pushed down): compare as sets
        compare(
          label,
          query.sort ? got : showSet(got),
          query.sort ? want : showSet(want),
        );

        // the same page on the plain collection as written (its `_id` pushdown and `_id`-page shortcut)
        if (query.sort) {
          compare(
            `${label} (plain collection as written)`,
            await run(plain, query.filter, query.sort),
            want,
          );
        }

        const choice = r.int(4);
        if (choice === 0) {
          compare(
            `countDocuments ${show(query.filter)}`,
            await indexed.countDocuments(query.filter),
            await plain.countDocuments(untouchable(query.filter)),
          );
        } else if (choice === 1) {
          const count = async (coll: typeof indexed, filter: Filter) =>
            (await db.command({ count: coll.collectionName, query: filter }))[
              'n'
            ];
          compare(
            `count ${show(query.filter)}`,
            await count(indexed, query.filter),
            await count(plain, untouchable(query.filter)),
          );
        } else if (choice === 2) {
          const pipeline = (filter: Filter) => [
            { $match: filter },
            { $count: 'n' },
          ];
          compare(
            `aggregate $match+$count ${show(query.filter)}`,
            await indexed.aggregate(pipeline(query.filter)).toArray(),
            await plain
              .aggregate(pipeline(untouchable(query.filter)))
              .toArray(),
          );
        } else {
          const skip = query.skip ?? 0;
          const limit = query.limit ?? 20;
          const pipeline = (filter: Filter, sort: Record<string, 1 | -1>) => [
            { $match: filter },
            { $sort: sort },
            { $skip: skip },
            { $limit: limit },
          ];
          const sort = query.sort ?? { _id: -1 };
          compare(
            `aggregate $match+$sort+$skip+$limit ${show({ ...query, sort })}`,
            await indexed.aggregate(pipeline(query.filter, sort)).toArray(),
            await plain
              .aggregate(
                pipeline(untouchable(query.filter), untouchableSort(sort)),
              )
              .toArray(),
          );
        }
      }
    };

    const wholeCounts = async () => {
      const everything = { _id: { $exists: true } };
      const want = await plain.countDocuments(everything);
      for (const coll of [indexed, plain]) {
        compare(
          `countDocuments({}) on ${coll.collectionName}`,
          await coll.countDocuments({}),
          want,
        );
        compare(
          `count command on ${coll.collectionName}`,
          (await db.command({ count: coll.collectionName }))['n'],
          want,
        );
        compare(
          `count command with skip 3, limit 5 on ${coll.collectionName}`,
          (await db.command({ count: coll.collectionName, skip: 3, limit: 5 }))[
            'n'
          ],
          Math.min(5, Math.max(0, want - 3)),
        );
        compare(
          `$group {_id: null, n: {$sum: 1}} on ${coll.collectionName}`,
          await coll
            .aggregate([{ $group: { _id: null, n: { $sum: 1 } } }])
            .toArray(),
          await plain
            .aggregate([
              { $match: everything },
              { $group: { _id: null, n: { $sum: 1 } } },
            ])
            .toArray(),
        );
      }
      return want;
    };

    compare('documents stored', await wholeCounts(), DOCUMENTS);
    await runQueries(QUERIES);

    // updates and deletes also read through the pushdown: apply the same random ones to both
    for (let m = 0; m < MUTATIONS; m++) {
      const filter = makeFilter(r, docs);
      if (r.chance(0.3)) {
        const got = await indexed.deleteMany(filter);
        const want = await plain.deleteMany(untouchable(filter));
        compare(
          `deleteMany ${show(filter)}`,
          got.deletedCount,
          want.deletedCount,
        );
      } else {
        const set = { [r.pick(['f', 'g', 'n', 'c', 'u'])]: value(r) };
        const got = await indexed.updateMany(filter, { $set: set });
        const want = await plain.updateMany(untouchable(filter), { $set: set });
        compare(
          `updateMany ${show(filter)} $set ${show(set)}`,
          [got.matchedCount, got.modifiedCount],
          [want.matchedCount, want.modifiedCount],
        );
      }
    }
    compare(
      'contents after the updates and deletes',
      await indexed.find({}).sort({ _id: 1 }).toArray(),
      await plain
        .find(untouchable({}))
        .sort(untouchableSort({ _id: 1 }))
        .toArray(),
    );
    await wholeCounts();
    await runQueries(Math.floor(QUERIES / 3));

    return { differences, pushed, nonEmpty, total };
  }

  it.each<Scenario>(['mixed', 'stringish', 'oids'])(
    'gives the same answers with and without indexes, with `_id`s: %s',
    async (scenario) => {
      const seed = SEED + ['mixed', 'stringish', 'oids'].indexOf(scenario);
      const result = await differential(scenario, seed);
      if (result.differences.length > 0) {
        throw new Error(
          `${result.differences.length} of ${result.total} answers differ (replay with PUSHDOWN_SEED=${SEED}):\n` +
            result.differences.slice(0, 10).join('\n'),
        );
      }
      // the test means something only if the pushdown is used and queries find documents
      expect(result.pushed).toBeGreaterThan(QUERIES / 5);
      expect(result.nonEmpty).toBeGreaterThan(QUERIES / 3);
    },
    120_000,
  );
});
