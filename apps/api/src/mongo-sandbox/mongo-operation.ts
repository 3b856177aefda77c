/** The operations the AI may run through `db_query` (the seed's whitelist). */
export const MONGO_OPERATIONS = [
  'find',
  'findOne',
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'countDocuments',
  'aggregate',
  'createCollection',
  'createIndex',
  'listCollections',
] as const;

export type MongoOperationName = (typeof MONGO_OPERATIONS)[number];

/** Operations that change documents (a collection's owner may take them over, as cronjobs does). */
export const MONGO_DOCUMENT_WRITES: ReadonlySet<MongoOperationName> =
  new Set<MongoOperationName>([
    'insertOne',
    'insertMany',
    'updateOne',
    'updateMany',
    'deleteOne',
    'deleteMany',
  ]);

/** Operations that change data or collections: only AI-writable collections. */
export const MONGO_WRITE_OPERATIONS: ReadonlySet<MongoOperationName> =
  new Set<MongoOperationName>([
    ...MONGO_DOCUMENT_WRITES,
    'createCollection',
    'createIndex',
  ]);

export type MongoDocument = Record<string, unknown>;

export interface MongoOperationOptions {
  // find, findOne, countDocuments, aggregate (limit only)
  projection?: MongoDocument;
  sort?: MongoDocument;
  limit?: number;
  skip?: number;
  // updateOne, updateMany
  upsert?: boolean;
  // createIndex
  name?: string;
  unique?: boolean;
  sparse?: boolean;
  expireAfterSeconds?: number;
  partialFilterExpression?: MongoDocument;
  // createCollection
  capped?: boolean;
  size?: number;
  max?: number;
}

/**
 * A checked `db_query` call. Extended JSON `{"$oid"}` / `{"$date"}` values are
 * already converted to ObjectId / Date.
 */
export interface MongoOperation {
  operation: MongoOperationName;
  /** Empty for `listCollections`, which ignores it. */
  collection: string;
  filter?: MongoDocument;
  /** An update document (`$set`…) or an update pipeline. */
  update?: MongoDocument | MongoDocument[];
  /** One document (insertOne) or an array of them (insertMany). */
  data?: MongoDocument | MongoDocument[];
  pipeline?: MongoDocument[];
  options?: MongoOperationOptions;
  /** createIndex: `{ field: 1 | -1 | 'text' … }` */
  keys?: MongoDocument;
}

export type MongoOperationCheck =
  | { valid: true; op: MongoOperation }
  | { valid: false; error: string };
