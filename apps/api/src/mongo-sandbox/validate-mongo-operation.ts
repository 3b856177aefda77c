import {
  AI_COLLECTION_PREFIX,
  AI_MANAGED_COLLECTIONS,
} from '@metatronos/shared-types';
import mongoose from 'mongoose';
import {
  SECRET_FIELD_PATTERN,
  SETTINGS_COLLECTION,
  collectionAccess,
  collectionNameProblem,
  isAiWritableCollection,
  isProtectedCollection,
} from './collection-access';
import {
  MONGO_OPERATIONS,
  MONGO_WRITE_OPERATIONS,
  type MongoDocument,
  type MongoOperation,
  type MongoOperationCheck,
  type MongoOperationName,
  type MongoOperationOptions,
} from './mongo-operation';

/** insertMany accepts at most this many documents per call. */
export const MAX_INSERT_DOCUMENTS = 1000;
/** Deeper values are refused: real queries never come close, and recursion stays bounded. */
export const MAX_VALUE_DEPTH = 64;
export const MAX_SKIP = 1_000_000;

/** Read-only stages; anything else ($out, $merge, $currentOp, $collStats, $documents…) is refused. */
export const ALLOWED_AGGREGATION_STAGES: ReadonlySet<string> = new Set([
  '$match',
  '$project',
  '$addFields',
  '$set',
  '$unset',
  '$group',
  '$sort',
  '$limit',
  '$skip',
  '$count',
  '$unwind',
  '$sortByCount',
  '$bucket',
  '$bucketAuto',
  '$facet',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$lookup',
  '$graphLookup',
  '$unionWith',
  '$redact',
  '$densify',
  '$fill',
  '$setWindowFields',
]);
export const ALLOWED_UPDATE_PIPELINE_STAGES: ReadonlySet<string> = new Set([
  '$set',
  '$addFields',
  '$project',
  '$unset',
  '$replaceRoot',
  '$replaceWith',
]);
export const ALLOWED_UPDATE_OPERATORS: ReadonlySet<string> = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$rename',
  '$min',
  '$max',
  '$currentDate',
  '$setOnInsert',
  '$push',
  '$pull',
  '$pullAll',
  '$addToSet',
  '$pop',
  '$bit',
]);

/** Server-side JavaScript, refused at any depth. */
const JAVASCRIPT_OPERATORS = new Set(['$where', '$function', '$accumulator']);
/** Stages that write, refused at any depth (not only where a stage is expected). */
const WRITING_STAGES = new Set(['$out', '$merge']);
/** Stages that read another collection. */
const JOIN_STAGES = new Set(['$lookup', '$graphLookup', '$unionWith']);
/**
 * Operators that turn field names into values (or build documents with computed
 * field names, or measure them): on `settings` they would reach a secret without naming it.
 */
const SETTINGS_BLOCKED_OPERATORS = new Set([
  '$objectToArray',
  '$arrayToObject',
  '$getField',
  '$setField',
  '$unsetField',
  '$jsonSchema',
  '$bsonSize',
]);
const AI_MANAGED: ReadonlySet<string> = new Set(AI_MANAGED_COLLECTIONS);
const INDEX_KEY_TYPES = new Set(['text', '2dsphere', '2d', 'hashed']);
const HEX_OBJECT_ID = /^[0-9a-fA-F]{24}$/;

type TopLevelField =
  | 'filter'
  | 'update'
  | 'data'
  | 'pipeline'
  | 'options'
  | 'keys';
const TOP_LEVEL_FIELDS = new Set<string>([
  'operation',
  'collection',
  'filter',
  'update',
  'data',
  'pipeline',
  'options',
  'keys',
]);

const FIELDS_BY_OPERATION: Record<
  MongoOperationName,
  readonly TopLevelField[]
> = {
  find: ['filter', 'options'],
  findOne: ['filter', 'options'],
  countDocuments: ['filter', 'options'],
  aggregate: ['pipeline', 'options'],
  insertOne: ['data'],
  insertMany: ['data'],
  updateOne: ['filter', 'update', 'options'],
  updateMany: ['filter', 'update', 'options'],
  deleteOne: ['filter'],
  deleteMany: ['filter'],
  createCollection: ['options'],
  createIndex: ['keys', 'options'],
  listCollections: [],
};

type OptionName = keyof MongoOperationOptions;
const OPTIONS_BY_OPERATION: Record<MongoOperationName, readonly OptionName[]> =
  {
    find: ['projection', 'sort', 'limit', 'skip'],
    findOne: ['projection', 'sort', 'skip'],
    countDocuments: ['limit', 'skip'],
    aggregate: ['limit'],
    insertOne: [],
    insertMany: [],
    updateOne: ['upsert'],
    updateMany: ['upsert'],
    deleteOne: [],
    deleteMany: [],
    createCollection: ['capped', 'size', 'max'],
    createIndex: [
      'name',
      'unique',
      'sparse',
      'expireAfterSeconds',
      'partialFilterExpression',
    ],
    listCollections: [],
  };

class Refusal extends Error {}

function refuse(message: string): never {
  throw new Refusal(message);
}

/**
 * Checks one `db_query` call from the model: allowed operation, collection
 * access (protected core collections read-only, writes only on AI-managed and
 * `ai_*` collections, `auth_*` invisible), no server-side JavaScript or writing
 * stages anywhere, no way to reach the secret fields of `settings`, and the
 * shape of every argument. Extended JSON `$oid`/`$date` values are converted on
 * the way, in the same single pass.
 */
export function validateMongoOperation(op: unknown): MongoOperationCheck {
  try {
    return { valid: true, op: checkOperation(op) };
  } catch (error) {
    if (error instanceof Refusal) return { valid: false, error: error.message };
    throw error;
  }
}

function checkOperation(raw: unknown): MongoOperation {
  if (!isPlainObject(raw))
    refuse(
      'The operation must be a JSON object with at least "operation" and "collection".',
    );
  const operation = raw['operation'];
  if (operation === undefined || operation === null)
    refuse(
      `Missing 'operation'. Allowed operations: ${MONGO_OPERATIONS.join(', ')}.`,
    );
  if (
    typeof operation !== 'string' ||
    !(MONGO_OPERATIONS as readonly string[]).includes(operation)
  ) {
    const shown =
      typeof operation === 'string'
        ? `'${clip(operation)}'`
        : `of type ${typeName(operation)}`;
    refuse(
      `Operation ${shown} is not allowed. Allowed operations: ${MONGO_OPERATIONS.join(', ')}.`,
    );
  }
  const name = operation as MongoOperationName;
  for (const key of Object.keys(raw)) {
    if (!TOP_LEVEL_FIELDS.has(key)) {
      refuse(
        `Unknown argument '${clip(key)}'. Arguments are operation, collection, filter, update, data, pipeline, options and keys ` +
          '(projection, sort, limit, skip and upsert go inside options).',
      );
    }
  }
  if (name === 'listCollections') return { operation: name, collection: '' };

  const collection = checkCollection(raw['collection'], name);
  const walker = new ValueWalker(collection === SETTINGS_COLLECTION);
  const op: MongoOperation = { operation: name, collection };
  const used = FIELDS_BY_OPERATION[name];
  for (const field of [
    'filter',
    'update',
    'data',
    'pipeline',
    'options',
    'keys',
  ] as const) {
    const value = raw[field];
    if (!used.includes(field) && !isEmptyValue(value)) {
      refuse(`'${field}' is not used by ${name}; ${describeFields(name)}.`);
    }
  }

  if (used.includes('filter')) {
    const filter = raw['filter'];
    if (filter === undefined || filter === null) {
      if (
        name === 'updateOne' ||
        name === 'updateMany' ||
        name === 'deleteOne' ||
        name === 'deleteMany'
      ) {
        refuse(
          `${name} needs a 'filter' object (use {} to match every document).`,
        );
      }
    } else {
      op.filter = walker.document(filter, 'filter');
    }
  }
  if (name === 'insertOne' || name === 'insertMany')
    op.data = checkData(raw['data'], name, walker);
  if (name === 'updateOne' || name === 'updateMany')
    op.update = checkUpdate(raw['update'], walker);
  if (name === 'aggregate')
    op.pipeline = walker.pipeline(
      raw['pipeline'],
      'pipeline',
      ALLOWED_AGGREGATION_STAGES,
      'aggregation',
    );
  if (name === 'createIndex') op.keys = checkIndexKeys(raw['keys']);
  const options = raw['options'];
  if (options !== undefined && options !== null)
    op.options = checkOptions(options, name, walker);
  if (op.options && AI_MANAGED.has(collection))
    checkAppWrittenOptions(op.options, name, collection);
  return op;
}

/**
 * Index and collection options that would let the AI break the app's own
 * writes: a unique or partial index makes them fail, a TTL index deletes the
 * app's documents, a capped collection refuses deletes and drops old documents.
 */
const APP_WRITTEN_REFUSED_OPTIONS: Partial<
  Record<MongoOperationName, readonly OptionName[]>
> = {
  createIndex: ['unique', 'partialFilterExpression', 'expireAfterSeconds'],
  createCollection: ['capped', 'size', 'max'],
};

function checkAppWrittenOptions(
  options: MongoOperationOptions,
  operation: MongoOperationName,
  collection: string,
): void {
  for (const key of APP_WRITTEN_REFUSED_OPTIONS[operation] ?? []) {
    if (options[key] === undefined || options[key] === false) continue;
    refuse(
      `'options.${key}' is refused on '${collection}': the app also writes this collection, and ` +
        (operation === 'createIndex'
          ? 'a unique, partial or TTL index could make its writes fail or delete its data. '
          : 'a capped collection would refuse its deletes and drop its documents. ') +
        `Plain indexes are fine here; use these options on your own '${AI_COLLECTION_PREFIX}' collections.`,
    );
  }
}

function checkCollection(
  value: unknown,
  operation: MongoOperationName,
): string {
  if (value === undefined || value === null)
    refuse(`Missing 'collection': name the collection to run ${operation} on.`);
  const problem = collectionNameProblem(value);
  if (problem) {
    refuse(
      typeof value === 'string'
        ? `Invalid collection name '${clip(value)}': ${problem}.`
        : `Invalid collection name: 'collection' must be a string (got ${typeName(value)}).`,
    );
  }
  const name = value as string;
  if (collectionAccess(name) === 'hidden') refuse(hiddenCollectionError(name));
  if (MONGO_WRITE_OPERATIONS.has(operation)) {
    if (isProtectedCollection(name)) {
      refuse(
        `Access denied: '${name}' is a protected core collection and is read-only for you. ` +
          `You may read it with find, findOne, countDocuments or aggregate, but ${operation} is refused.`,
      );
    }
    if (!isAiWritableCollection(name)) {
      refuse(
        `Write operations are restricted to AI-managed collections (${AI_MANAGED_COLLECTIONS.join(', ')}) ` +
          `or collections with the '${AI_COLLECTION_PREFIX}' prefix. '${name}' is read-only for you; ` +
          `keep your own data in a collection such as '${AI_COLLECTION_PREFIX}notes'.`,
      );
    }
  }
  return name;
}

function hiddenCollectionError(name: string): string {
  return `Access denied: '${clip(name)}' is a private system collection; it cannot be read or written.`;
}

function checkData(
  value: unknown,
  operation: 'insertOne' | 'insertMany',
  walker: ValueWalker,
): MongoDocument | MongoDocument[] {
  if (operation === 'insertOne') {
    if (Array.isArray(value))
      refuse(
        "'data' must be a single document for insertOne; use insertMany to insert an array.",
      );
    if (!isPlainObject(value) || Object.keys(value).length === 0) {
      refuse(
        `'data' must be a non-empty document for insertOne (got ${typeName(value)}).`,
      );
    }
    return walker.document(value, 'data');
  }
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > MAX_INSERT_DOCUMENTS
  ) {
    const got = Array.isArray(value)
      ? `${value.length} documents`
      : typeName(value);
    refuse(
      `'data' must be an array of 1 to ${MAX_INSERT_DOCUMENTS} documents for insertMany (got ${got}).`,
    );
  }
  return value.map((doc, index) => {
    if (!isPlainObject(doc))
      refuse(`'data[${index}]' must be a document (got ${typeName(doc)}).`);
    return walker.document(doc, `data[${index}]`);
  });
}

function checkUpdate(
  value: unknown,
  walker: ValueWalker,
): MongoDocument | MongoDocument[] {
  if (Array.isArray(value)) {
    if (value.length === 0) refuse("'update' must not be an empty pipeline.");
    return walker.pipeline(
      value,
      'update',
      ALLOWED_UPDATE_PIPELINE_STAGES,
      'update',
    );
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    refuse(
      `'update' must be an update document such as { "$set": { "city": "Paris" } } or an update pipeline (got ${typeName(value)}).`,
    );
  }
  for (const key of Object.keys(value)) {
    if (!ALLOWED_UPDATE_OPERATORS.has(key)) {
      if (!key.startsWith('$')) {
        refuse(
          `'update' must use update operators such as $set; '${clip(key)}' is a plain field (whole-document replacement is not supported).`,
        );
      }
      if (JAVASCRIPT_OPERATORS.has(key)) refuse(javascriptError(key, 'update'));
      refuse(
        `Update operator '${clip(key)}' is not allowed. Allowed: ${[...ALLOWED_UPDATE_OPERATORS].join(', ')}.`,
      );
    }
  }
  return walker.document(value, 'update');
}

function checkIndexKeys(value: unknown): MongoDocument {
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    refuse(
      `createIndex needs 'keys', e.g. { "name": 1 } (got ${typeName(value)}).`,
    );
  }
  for (const [field, type] of Object.entries(value)) {
    if (
      field === '' ||
      field === '__proto__' ||
      (field.startsWith('$') && field !== '$**')
    ) {
      refuse(`'keys.${clip(field)}' is not a field that can be indexed.`);
    }
    if (
      type !== 1 &&
      type !== -1 &&
      !(typeof type === 'string' && INDEX_KEY_TYPES.has(type))
    ) {
      refuse(
        `'keys.${clip(field)}' must be 1, -1, "text", "2dsphere", "2d" or "hashed".`,
      );
    }
  }
  return { ...value };
}

function checkOptions(
  value: unknown,
  operation: MongoOperationName,
  walker: ValueWalker,
): MongoOperationOptions {
  if (!isPlainObject(value))
    refuse(`'options' must be an object (got ${typeName(value)}).`);
  const allowed = OPTIONS_BY_OPERATION[operation];
  const options: MongoOperationOptions = {};
  for (const [key, option] of Object.entries(value)) {
    if (!(allowed as readonly string[]).includes(key)) {
      refuse(
        `'options.${clip(key)}' is not accepted by ${operation}. ` +
          (allowed.length
            ? `Allowed options: ${allowed.join(', ')}.`
            : `${operation} takes no options.`),
      );
    }
    if (option === undefined || option === null) continue;
    const path = `options.${key}`;
    switch (key as OptionName) {
      case 'projection':
      case 'sort':
        options[key as 'projection' | 'sort'] = walker.document(option, path);
        break;
      case 'partialFilterExpression':
        options.partialFilterExpression = walker.document(option, path);
        break;
      case 'limit':
      case 'size':
      case 'max':
        options[key as 'limit' | 'size' | 'max'] = integer(
          option,
          path,
          1,
          Number.MAX_SAFE_INTEGER,
          'a positive integer',
        );
        break;
      case 'skip':
        options.skip = integer(
          option,
          path,
          0,
          MAX_SKIP,
          `an integer from 0 to ${MAX_SKIP}`,
        );
        break;
      case 'expireAfterSeconds':
        options.expireAfterSeconds = integer(
          option,
          path,
          0,
          2_147_483_647,
          'a non-negative integer (seconds)',
        );
        break;
      case 'upsert':
      case 'unique':
      case 'sparse':
      case 'capped':
        if (typeof option !== 'boolean')
          refuse(`'${path}' must be true or false (got ${typeName(option)}).`);
        options[key as 'upsert' | 'unique' | 'sparse' | 'capped'] = option;
        break;
      case 'name':
        if (
          typeof option !== 'string' ||
          option.length === 0 ||
          option.length > 120
        ) {
          refuse(`'${path}' must be a string of 1 to 120 characters.`);
        }
        options.name = option;
        break;
    }
  }
  return options;
}

function integer(
  value: unknown,
  path: string,
  min: number,
  max: number,
  expected: string,
): number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < min ||
    value > max
  ) {
    refuse(
      `'${path}' must be ${expected} (got ${typeof value === 'number' ? value : typeName(value)}).`,
    );
  }
  return value;
}

/**
 * One recursive pass over a filter, document, update, pipeline or option value:
 * refuses what must never run and converts Extended JSON ids and dates.
 * `settings` turns on the secret-field checks. The current path is kept as a
 * stack and only turned into text for an error message.
 */
class ValueWalker {
  private readonly trail: Array<string | number> = [];

  constructor(private readonly onSettings: boolean) {}

  document(value: unknown, field: string): MongoDocument {
    if (!isPlainObject(value))
      refuse(`'${field}' must be an object (got ${typeName(value)}).`);
    return this.enter(
      field,
      () => this.value(value, 0, this.onSettings) as MongoDocument,
    );
  }

  pipeline(
    value: unknown,
    field: string,
    stages: ReadonlySet<string>,
    kind: 'aggregation' | 'update',
  ): MongoDocument[] {
    return this.enter(field, () =>
      this.stages(value, 0, this.onSettings, stages, kind),
    );
  }

  private enter<T>(field: string, run: () => T): T {
    this.trail.length = 0;
    this.trail.push(field);
    return run();
  }

  private path(): string {
    let text = '';
    for (const part of this.trail) {
      text += typeof part === 'number' ? `[${part}]` : text ? `.${part}` : part;
    }
    return text;
  }

  private value(value: unknown, depth: number, onSettings: boolean): unknown {
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'string') {
        if (
          onSettings &&
          value.charCodeAt(0) === 36 /* $ */ &&
          SECRET_FIELD_PATTERN.test(value)
        ) {
          refuse(secretFieldError(value, this.path()));
        }
      } else if (
        typeof value === 'function' ||
        typeof value === 'symbol' ||
        typeof value === 'bigint'
      ) {
        refuse(`'${this.path()}' holds a value that is not JSON.`);
      }
      return value;
    }
    if (depth > MAX_VALUE_DEPTH)
      refuse(
        `'${this.path()}' is nested too deeply (more than ${MAX_VALUE_DEPTH} levels).`,
      );
    if (Array.isArray(value)) {
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        this.trail.push(i);
        out[i] = this.value(value[i], depth + 1, onSettings);
        this.trail.pop();
      }
      return out;
    }
    if (!isPlainObject(value)) {
      // Already a BSON value (from code, not from the model): keep it, but never BSON JavaScript.
      if ((value as { _bsontype?: string })._bsontype === 'Code')
        refuse(javascriptError('Code', this.path()));
      return value;
    }
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === '$oid' || keys[0] === '$date'))
      return this.extendedJson(keys[0], value[keys[0]]);
    const out: MongoDocument = {};
    for (const key of keys) {
      this.checkKey(key, onSettings);
      this.trail.push(key);
      out[key] = this.value(value[key], depth + 1, onSettings);
      this.trail.pop();
    }
    return out;
  }

  private checkKey(key: string, onSettings: boolean): void {
    if (key.charCodeAt(0) === 36 /* $ */) {
      if (JAVASCRIPT_OPERATORS.has(key))
        refuse(javascriptError(key, this.path()));
      if (WRITING_STAGES.has(key)) refuse(writingStageError(key));
      if (onSettings && SETTINGS_BLOCKED_OPERATORS.has(key)) {
        refuse(
          `Access denied: '${key}' cannot be used on '${SETTINGS_COLLECTION}': it could reveal secret fields.`,
        );
      }
    } else if (key === '__proto__') {
      refuse(
        `'${this.path()}' uses the field name '__proto__', which is not allowed.`,
      );
    }
    if (onSettings && SECRET_FIELD_PATTERN.test(key))
      refuse(secretFieldError(key, `${this.path()}.${key}`));
  }

  private extendedJson(kind: '$oid' | '$date', raw: unknown): unknown {
    if (kind === '$oid') {
      if (typeof raw !== 'string' || !HEX_OBJECT_ID.test(raw)) {
        refuse(
          `Invalid {"$oid"} at '${this.path()}': expected 24 hexadecimal characters.`,
        );
      }
      return new mongoose.mongo.ObjectId(raw);
    }
    let millis = NaN;
    if (typeof raw === 'string') millis = Date.parse(raw);
    else if (typeof raw === 'number') millis = raw;
    else if (isPlainObject(raw) && typeof raw['$numberLong'] === 'string')
      millis = Number(raw['$numberLong']);
    const date = new Date(millis);
    if (Number.isNaN(date.getTime())) {
      refuse(
        `Invalid {"$date"} at '${this.path()}': expected an ISO 8601 date such as "2025-01-31T09:00:00Z".`,
      );
    }
    return date;
  }

  private stages(
    value: unknown,
    depth: number,
    onSettings: boolean,
    allowed: ReadonlySet<string>,
    kind: 'aggregation' | 'update',
  ): MongoDocument[] {
    if (!Array.isArray(value))
      refuse(
        `'${this.path()}' must be an array of stages (got ${typeName(value)}).`,
      );
    if (depth > MAX_VALUE_DEPTH)
      refuse(
        `'${this.path()}' is nested too deeply (more than ${MAX_VALUE_DEPTH} levels).`,
      );
    const out: MongoDocument[] = [];
    for (let i = 0; i < value.length; i++) {
      this.trail.push(i);
      const stage = value[i];
      const keys = isPlainObject(stage) ? Object.keys(stage) : [];
      if (keys.length !== 1) {
        refuse(
          `'${this.path()}' must be an object with exactly one stage operator, e.g. { "$match": { … } }.`,
        );
      }
      const name = keys[0];
      if (!allowed.has(name)) {
        if (WRITING_STAGES.has(name)) refuse(writingStageError(name));
        if (JAVASCRIPT_OPERATORS.has(name))
          refuse(javascriptError(name, this.path()));
        refuse(
          kind === 'aggregation'
            ? `Aggregation stage '${clip(name)}' is not allowed. Allowed stages: ${[...allowed].join(', ')}.`
            : `Update pipeline stage '${clip(name)}' is not allowed. Allowed stages: ${[...allowed].join(', ')}.`,
        );
      }
      this.trail.push(name);
      const body = (stage as MongoDocument)[name];
      out.push({ [name]: this.stageBody(name, body, depth + 2, onSettings) });
      this.trail.pop();
      this.trail.pop();
    }
    return out;
  }

  private stageBody(
    name: string,
    body: unknown,
    depth: number,
    onSettings: boolean,
  ): unknown {
    if (JOIN_STAGES.has(name)) {
      if (onSettings) {
        refuse(
          `Access denied: '${name}' cannot be used in a pipeline on '${SETTINGS_COLLECTION}': joining other data could reveal its secret fields.`,
        );
      }
      return this.joinStage(name, body, depth);
    }
    if (name === '$facet') {
      if (!isPlainObject(body))
        refuse(`'${this.path()}' must be an object of named pipelines.`);
      const out: MongoDocument = {};
      for (const key of Object.keys(body)) {
        this.checkKey(key, onSettings);
        this.trail.push(key);
        out[key] = this.stages(
          body[key],
          depth + 1,
          onSettings,
          ALLOWED_AGGREGATION_STAGES,
          'aggregation',
        );
        this.trail.pop();
      }
      return out;
    }
    return this.value(body, depth, onSettings);
  }

  /** `$lookup`, `$graphLookup`, `$unionWith`: the target must be a readable collection of this database. */
  private joinStage(name: string, body: unknown, depth: number): unknown {
    if (name === '$unionWith' && typeof body === 'string') {
      this.checkJoinTarget(name, body);
      return body;
    }
    if (!isPlainObject(body)) refuse(`'${this.path()}' must be an object.`);
    const targetField = name === '$unionWith' ? 'coll' : 'from';
    this.checkJoinTarget(name, body[targetField], targetField);
    const out: MongoDocument = {};
    for (const key of Object.keys(body)) {
      this.checkKey(key, false);
      this.trail.push(key);
      // The sub-pipeline runs on the target collection, which is never `settings`.
      out[key] =
        key === 'pipeline' && name !== '$graphLookup'
          ? this.stages(
              body[key],
              depth + 1,
              false,
              ALLOWED_AGGREGATION_STAGES,
              'aggregation',
            )
          : this.value(body[key], depth + 1, false);
      this.trail.pop();
    }
    return out;
  }

  private checkJoinTarget(
    stage: string,
    target: unknown,
    field?: string,
  ): void {
    const where = field ? `${stage}.${field}` : stage;
    if (isPlainObject(target)) {
      refuse(
        `'${where}' must be a collection name in this database; other databases are out of reach.`,
      );
    }
    if (target === undefined || target === null)
      refuse(`'${where}' must name the collection to read.`);
    const problem = collectionNameProblem(target);
    if (problem) {
      refuse(
        typeof target === 'string'
          ? `Invalid collection name '${clip(target)}' in '${where}': ${problem}.`
          : `Invalid collection name in '${where}': it must be a string (got ${typeName(target)}).`,
      );
    }
    const name = target as string;
    if (collectionAccess(name) === 'hidden')
      refuse(hiddenCollectionError(name));
    if (name === SETTINGS_COLLECTION) {
      refuse(
        `Access denied: '${stage}' cannot read '${SETTINGS_COLLECTION}': it holds secrets. ` +
          `Query '${SETTINGS_COLLECTION}' directly; its secret fields come back masked.`,
      );
    }
  }
}

function secretFieldError(reference: string, path: string): string {
  return (
    `Access denied: secret fields of '${SETTINGS_COLLECTION}' cannot be queried, sorted, grouped or projected ` +
    `('${clip(reference)}' at ${path}). Read the documents without naming them: their values come back masked.`
  );
}

function javascriptError(operator: string, path: string): string {
  return `Server-side JavaScript is not allowed: '${operator}' in ${path}. Use query operators and aggregation expressions instead.`;
}

function writingStageError(stage: string): string {
  return `Aggregation stage '${stage}' is not allowed: pipelines may only read. Use insertMany or updateMany to write.`;
}

function describeFields(operation: MongoOperationName): string {
  const fields = FIELDS_BY_OPERATION[operation];
  return fields.length
    ? `${operation} takes ${fields.map((f) => `'${f}'`).join(' and ')}`
    : `${operation} takes no other arguments`;
}

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

export function isPlainObject(
  value: unknown,
): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return false;
  const proto = Object.getPrototypeOf(value);
  // Any realm's Object.prototype (a body parsed by another realm's JSON.parse is still a plain object).
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'string' ? 'a string' : typeof value;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
