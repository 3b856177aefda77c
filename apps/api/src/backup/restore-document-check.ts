import { createHash } from 'node:crypto';
import { mongo, type Connection, type Model } from 'mongoose';
import { schemaProblems, valueAt } from '../database/stored-document-shape';
import { isAiWritableCollection } from '../mongo-sandbox/collection-access';
import { APP_SETTINGS_ID } from '../settings/schemas/app-settings.schema';
import { SYSTEM_INSTRUCTION_ID } from '../system-instruction/schemas/system-instruction.schema';

/** Collections holding several kinds of document, told apart by `_id`. */
const SINGLETON_IDS: Record<string, Record<string, string>> = {
  settings: {
    [APP_SETTINGS_ID]: 'AppSettingsRecord',
    [SYSTEM_INSTRUCTION_ID]: 'SystemInstructionRecord',
  },
};

/** A unique key to enforce: the index's fields, or `_id`. */
export interface UniqueKey {
  name: string;
  fields: string[];
  sparse: boolean;
}

/** How a document is named in a message: its `_id` as the owner would type it. */
export function documentLabel(doc: mongo.BSON.Document): string {
  const id: unknown = doc['_id'];
  const text =
    id instanceof mongo.ObjectId
      ? id.toHexString()
      : typeof id === 'string'
        ? JSON.stringify(id)
        : mongo.BSON.EJSON.stringify(id as mongo.BSON.Document, {
            relaxed: true,
          });
  return `_id ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
}

/**
 * Checks the documents of one collection as they stream by: the app's schema for
 * that collection (when it has one) and every unique key (`_id`, the manifest's
 * unique indexes and the app's own). Keys are kept as hashes, so memory stays
 * small for large collections.
 */
export class CollectionChecker {
  private readonly models: Model<unknown>[];
  private readonly keys: UniqueKey[];
  private readonly seen: Array<Set<string>>;
  private readonly schemaChecked: boolean;

  constructor(
    private readonly collection: string,
    connection: Connection,
    manifestIndexes: readonly Record<string, unknown>[],
  ) {
    this.models = Object.values(connection.models).filter(
      (model) => model.collection.collectionName === collection,
    ) as Model<unknown>[];
    this.keys = uniqueKeys(
      manifestIndexes,
      this.models.map((model) => model.schema),
    );
    this.seen = this.keys.map(() => new Set<string>());
    // The AI writes contacts, schedule and master through the sandbox in shapes of its own, so
    // the app reads them tolerantly already; cronjobs writes pass the job validation, so they fit.
    this.schemaChecked =
      collection === 'cronjobs' || !isAiWritableCollection(collection);
  }

  /** What is wrong with one document, in one sentence (none when it may be written). */
  check(doc: mongo.BSON.Document): string[] {
    const problems: string[] = [];
    const model = this.modelFor(doc);
    // Promote BSON number wrappers to plain values, as the app reads them.
    const plain = mongo.BSON.deserialize(mongo.BSON.serialize(doc));
    if (model && this.schemaChecked)
      problems.push(...schemaProblems(model.schema, plain));
    this.keys.forEach((key, i) => {
      const values = key.fields.map((field) => {
        const found = valueAt(plain, field);
        return 'value' in found ? found.value : undefined;
      });
      if (key.sparse && values.every((v) => v === undefined)) return;
      const hash = createHash('sha256')
        .update(
          mongo.BSON.EJSON.stringify(
            { v: values.map((v) => (v === undefined ? null : v)) },
            { relaxed: false },
          ),
        )
        .digest('base64');
      if (this.seen[i].has(hash))
        problems.push(
          key.fields.length === 1 && key.fields[0] === '_id'
            ? 'its _id appears twice in the archive'
            : `${key.fields.join(' + ')} repeats another document's value, but the unique index ${key.name} allows each only once`,
        );
      else this.seen[i].add(hash);
    });
    return problems.length
      ? [
          `in ${this.collection}, the document with ${documentLabel(doc)}: ${problems.join(', ')}`,
        ]
      : [];
  }

  private modelFor(doc: mongo.BSON.Document): Model<unknown> | undefined {
    const byId = SINGLETON_IDS[this.collection];
    if (byId) {
      const name =
        typeof doc['_id'] === 'string' ? byId[doc['_id']] : undefined;
      return this.models.find((model) => model.modelName === name);
    }
    return this.models.length === 1 ? this.models[0] : undefined;
  }
}

/** `_id` plus every unique index without a partial filter (a partial one is left to the database). */
export function uniqueKeys(
  manifestIndexes: readonly Record<string, unknown>[],
  schemas: readonly Model<unknown>['schema'][],
): UniqueKey[] {
  const keys: UniqueKey[] = [{ name: '_id_', fields: ['_id'], sparse: false }];
  const add = (fields: string[], options: Record<string, unknown>) => {
    if (options['unique'] !== true || options['partialFilterExpression'])
      return;
    if (fields.some((f) => typeof f !== 'string')) return;
    const id = fields.join(',');
    if (keys.some((k) => k.fields.join(',') === id)) return;
    keys.push({
      name: String(options['name'] ?? fields.map((f) => `${f}_1`).join('_')),
      fields,
      sparse: options['sparse'] === true,
    });
  };
  for (const spec of manifestIndexes) {
    const key = spec['key'];
    if (key && typeof key === 'object') add(Object.keys(key), spec);
  }
  for (const schema of schemas)
    for (const [fields, options] of schema.indexes())
      add(Object.keys(fields), (options ?? {}) as Record<string, unknown>);
  return keys;
}
