import {
  Long,
  MongoNetworkError,
  MongoServerError,
  type BulkWriteOptions,
  type Collection as DriverCollection,
  type Document,
  type Filter,
  type InsertManyResult,
  type MongoClient,
  type OptionalUnlessRequiredId,
  type UpdateFilter,
  type UpdateOptions,
  type UpdateResult,
  type WithId,
} from 'mongodb';
import { CommandTooLarge, type EmbeddedWire } from './embedded-wire';

/** The embedded database's wire, by the driver client whose database it is (set at start, see DatabaseModule). */
const wires = new WeakMap<MongoClient, EmbeddedWire>();
/** The wire-backed collection made for each driver collection (it asks for the wire at each call). */
const wired = new WeakMap<object, DriverCollection<Document>>();

/**
 * Sends `client`'s commands through `wire` from now on: `driverCollection`'s writes, `updateEach`,
 * and the reads of `findAll`, `aggregateAll` and `countAll`.
 */
export function useEmbeddedWire(client: MongoClient, wire: EmbeddedWire): void {
  wires.set(client, wire);
}

export function stopUsingEmbeddedWire(client: MongoClient): void {
  wires.delete(client);
}

/** The wire for `collection`'s client, if it has one now. */
function wireFor(collection: object): EmbeddedWire | undefined {
  const client = (collection as unknown as { client?: MongoClient }).client;
  return client && wires.get(client);
}

/**
 * The MongoDB driver's own collection behind a mongoose model's `collection`, for the writes every
 * chat turn makes. Mongoose's wrapper (`NativeCollection`) costs each call a new ObjectId, a copy of
 * the arguments, `operation-start`/`operation-end` events with their objects and a second promise:
 * about a tenth of a command's CPU. None of it does anything here: commands are not buffered
 * (`bufferCommands: false`), mongoose's debug log is off and nothing listens to those events.
 * Before the connection's first open it is the wrapper, which throws its usual error.
 *
 * On the embedded database its `insertMany` and `updateOne` go through `EmbeddedWire`, one OP_MSG
 * each, with the driver's results and errors (a refused write as a `MongoServerError` with its
 * `code` and `writeErrors`); so does `updateEach`. Anything else they are given (a session, a
 * write concern, a document without `_id`, an update pipeline) and every other method is the
 * driver's own.
 */
export function driverCollection<T extends Document>(
  collection: DriverCollection<T>,
): DriverCollection<T> {
  const driver =
    (collection as unknown as { collection?: DriverCollection<T> | null })
      .collection ?? collection;
  if (!wireFor(driver)) return driver;
  let fast = wired.get(driver) as DriverCollection<T> | undefined;
  if (!fast) {
    fast = wireCollection(driver);
    wired.set(driver, fast as unknown as DriverCollection<Document>);
  }
  return fast;
}

/**
 * `driver` with its two hot writes sent through its client's wire, looked up at each call: once the
 * wire is gone (the connection closed) they are the driver's again, even for a caller that kept it.
 */
function wireCollection<T extends Document>(
  driver: DriverCollection<T>,
): DriverCollection<T> {
  const fast = Object.create(driver) as DriverCollection<T>;
  const name = driver.collectionName;
  const db = driver.dbName;
  const wire = () => wireFor(driver);

  fast.insertMany = async function (
    docs: readonly OptionalUnlessRequiredId<T>[],
    options?: BulkWriteOptions,
  ): Promise<InsertManyResult<T>> {
    const ordered = onlyOrdered(options);
    const reply =
      ordered !== undefined &&
      docs.length > 0 &&
      docs.every(hasId) &&
      (await sent(wire(), db, {
        insert: name,
        documents: docs,
        ordered,
      }));
    if (!reply) return driver.insertMany(docs, options);
    refusedWrites(reply);
    const insertedIds: Record<number, unknown> = {};
    docs.forEach((doc, i) => (insertedIds[i] = (doc as Document)['_id']));
    return {
      acknowledged: true,
      insertedCount: reply['n'] as number,
      insertedIds: insertedIds as InsertManyResult<T>['insertedIds'],
    };
  } as typeof driver.insertMany;

  fast.updateOne = async function (
    filter: Filter<T>,
    update: UpdateFilter<T> | Document[],
    options?: UpdateOptions,
  ): Promise<UpdateResult<T>> {
    const upsert = onlyUpsert(options);
    const reply =
      upsert !== undefined &&
      isOperatorUpdate(update) &&
      (await sent(wire(), db, {
        update: name,
        updates: [{ q: filter, u: update, ...(upsert ? { upsert } : {}) }],
        ordered: true,
      }));
    if (!reply) return driver.updateOne(filter, update, options);
    refusedWrites(reply);
    const upserted =
      (reply['upserted'] as { _id: unknown }[] | undefined) ?? [];
    return {
      acknowledged: true,
      matchedCount: (reply['n'] as number) - upserted.length,
      modifiedCount: (reply['nModified'] as number | undefined) ?? 0,
      upsertedCount: upserted.length,
      upsertedId: (upserted[0]?._id ?? null) as UpdateResult<T>['upsertedId'],
    };
  } as typeof driver.updateOne;

  return fast;
}

/**
 * Applies each `$set` in one unordered `update` command (a `bulkWrite` of `updateOne`s through the
 * driver); resolves once all are stored, rejects when any was refused (which ones is then unknown).
 */
export async function updateEach<T extends Document>(
  collection: DriverCollection<T>,
  updates: readonly { filter: Filter<T>; set: UpdateFilter<T>['$set'] }[],
): Promise<void> {
  const reply = await sent(wireFor(collection), collection.dbName, {
    update: collection.collectionName,
    updates: updates.map(({ filter, set }) => ({
      q: filter,
      u: { $set: set },
    })),
    ordered: false,
  });
  if (reply) {
    refusedWrites(reply);
    return;
  }
  await collection.bulkWrite(
    updates.map(({ filter, set }) => ({
      updateOne: { filter, update: { $set: set } as UpdateFilter<T> },
    })),
    { ordered: false },
  );
}

/** The options of `findAll`: those of a `find` the AI's `db_query` sends. */
export interface FindAllOptions {
  projection?: Document;
  sort?: Document;
  skip?: number;
  limit?: number;
  maxTimeMS?: number;
}

/**
 * Every document `collection.find(filter, options).toArray()` answers, in the same order and form.
 * On the embedded database it is one `find` through the wire (`readCursor`: a `getMore` per further
 * batch, the `find` sent again once after a broken connection, as the driver retries a read);
 * a sort the driver would first translate (`'asc'`, `{ $meta }`…), a negative limit (the driver's
 * single batch) and a missing wire leave it to the driver.
 */
export async function findAll<T extends Document>(
  collection: DriverCollection<T>,
  filter: Filter<T>,
  options: FindAllOptions = {},
): Promise<WithId<T>[]> {
  const wire = wireFor(collection);
  const { projection, sort, skip, limit, maxTimeMS } = options;
  const asSent =
    (sort === undefined || plainSort(sort)) &&
    (limit === undefined || limit >= 0);
  const name = collection.collectionName;
  const docs =
    wire && asSent
      ? await readCursor<WithId<T>>(
          wire,
          collection.dbName,
          name,
          {
            find: name,
            filter,
            ...(sort !== undefined && { sort }),
            ...(projection !== undefined && { projection }),
            ...(skip !== undefined && { skip }),
            ...(limit !== undefined && { limit }),
            ...(maxTimeMS !== undefined && { maxTimeMS }),
          },
          limit,
        )
      : undefined;
  return docs ?? collection.find(filter, options).toArray();
}

/**
 * Every document `collection.aggregate(pipeline, { maxTimeMS }).toArray()` answers, through the wire
 * on the embedded database as `findAll` reads. A pipeline that writes (`$out`, `$merge`: the driver adds
 * a write concern and does not retry it) and a missing wire leave it to the driver.
 */
export async function aggregateAll<
  T extends Document = Document,
  C extends Document = Document,
>(
  collection: DriverCollection<C>,
  pipeline: readonly Document[],
  options: { maxTimeMS?: number } = {},
): Promise<T[]> {
  const wire = wireFor(collection);
  const last = pipeline[pipeline.length - 1];
  const writes = !!last && ('$out' in last || '$merge' in last);
  const { maxTimeMS } = options;
  const name = collection.collectionName;
  const docs =
    wire && !writes
      ? await readCursor<T>(wire, collection.dbName, name, {
          aggregate: name,
          pipeline,
          cursor: {},
          ...(maxTimeMS !== undefined && { maxTimeMS }),
        })
      : undefined;
  return docs ?? collection.aggregate<T>([...pipeline], options).toArray();
}

/**
 * `collection.countDocuments(filter, options)`: the driver's own pipeline (`$match`, `$skip`, `$limit`,
 * one `$group`) run by `aggregateAll`.
 */
export async function countAll<C extends Document>(
  collection: DriverCollection<C>,
  filter: Document,
  options: { skip?: number; limit?: number; maxTimeMS?: number } = {},
): Promise<number> {
  const { skip, limit, maxTimeMS } = options;
  const pipeline: Document[] = [{ $match: filter }];
  if (typeof skip === 'number') pipeline.push({ $skip: skip });
  if (typeof limit === 'number') pipeline.push({ $limit: limit });
  pipeline.push({ $group: { _id: 1, n: { $sum: 1 } } });
  const [result] = await aggregateAll<{ n: number }, C>(collection, pipeline, {
    maxTimeMS,
  });
  return result?.n ?? 0;
}

/**
 * The documents of a cursor command (`find`, `aggregate`) sent through the wire, its further batches
 * read with `getMore` (closed with `killCursors` once `limit` are in); undefined when the command is
 * too large for the wire (the driver is to send it). Sent again once after a broken connection, as
 * the driver retries a read (on a new connection).
 */
async function readCursor<T>(
  wire: EmbeddedWire,
  db: string,
  name: string,
  command: Document,
  limit?: number,
): Promise<T[] | undefined> {
  const reply = await sent(wire, db, command).catch((error: unknown) => {
    if (error instanceof MongoNetworkError) return sent(wire, db, command);
    throw error;
  });
  if (!reply) return undefined;
  let cursor = reply['cursor'] as WireCursor;
  const docs = cursor.firstBatch as T[];
  while (!cursorDone(cursor.id)) {
    if (limit && docs.length >= limit) {
      await wire.command(db, {
        killCursors: name,
        cursors: [cursorId(cursor.id)],
      });
      break;
    }
    // As the driver's: no maxTimeMS (MongoDB takes it only for a tailable cursor's getMore).
    const more = await wire.command(db, {
      getMore: cursorId(cursor.id),
      collection: name,
    });
    cursor = more['cursor'] as WireCursor;
    for (const doc of cursor.nextBatch as T[]) docs.push(doc);
  }
  return docs;
}

interface WireCursor {
  id: number | Long;
  firstBatch?: Document[];
  nextBatch?: Document[];
}

function cursorDone(id: number | Long): boolean {
  return typeof id === 'number' ? id === 0 : id.isZero();
}

/** A cursor id as the server wants it back: a 64-bit integer (the reply's small ones come as numbers). */
function cursorId(id: number | Long): Long {
  return typeof id === 'number' ? Long.fromNumber(id) : id;
}

/** A sort the driver sends as it is: a document of 1s and -1s. */
function plainSort(sort: Document): boolean {
  if (!sort || typeof sort !== 'object' || Array.isArray(sort)) return false;
  return Object.values(sort).every((way) => way === 1 || way === -1);
}

/**
 * The wire's reply, or undefined when the driver is to send the command: no wire now, or a command
 * too large for it.
 */
async function sent(
  wire: EmbeddedWire | undefined,
  db: string,
  command: Document,
): Promise<Document | undefined> {
  if (!wire) return undefined;
  try {
    return await wire.command(db, command);
  } catch (error) {
    if (error instanceof CommandTooLarge) return undefined;
    throw error;
  }
}

/** `ordered` (default true) when the options hold nothing else; undefined when they do. */
function onlyOrdered(
  options: BulkWriteOptions | undefined,
): boolean | undefined {
  if (!options) return true;
  const keys = Object.keys(options);
  if (keys.some((key) => key !== 'ordered')) return undefined;
  return options.ordered ?? true;
}

/** `upsert` (default false) when the options hold nothing else; undefined when they do. */
function onlyUpsert(options: UpdateOptions | undefined): boolean | undefined {
  if (!options) return false;
  if (Object.keys(options).some((key) => key !== 'upsert')) return undefined;
  return options.upsert === true;
}

function hasId(doc: unknown): boolean {
  return (doc as Document)['_id'] !== undefined;
}

/** An update of operators only (`$set`, `$inc`…): what the driver would send as it is. */
function isOperatorUpdate(update: unknown): update is Document {
  if (!update || typeof update !== 'object' || Array.isArray(update))
    return false;
  const keys = Object.keys(update);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

/** A reply with refused writes, as the driver reports them: a `MongoServerError` of the first, all in `writeErrors`. */
function refusedWrites(reply: Document): void {
  const writeErrors = reply['writeErrors'] as
    | { index: number; code: number; errmsg: string }[]
    | undefined;
  if (!writeErrors?.length) return;
  const [first] = writeErrors;
  throw new MongoServerError({
    message: first.errmsg,
    errmsg: first.errmsg,
    code: first.code,
    writeErrors,
  });
}
