import { Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection, mongo } from 'mongoose';
import { SETTINGS_COLLECTION, collectionAccess } from './collection-access';
import type { MongoDocument, MongoOperation } from './mongo-operation';
import { RESULT_BYTE_CAP, ResultRedactor } from './result-redactor';
import { SandboxSecrets } from './sandbox-secrets';
import { validateMongoOperation } from './validate-mongo-operation';

/** Reads return at most this many documents; `options.limit` may lower it, never raise it. */
export const MAX_RESULT_DOCUMENTS = 100;
/** Server-side time limit of every read, count and aggregation. */
export const QUERY_TIME_LIMIT_MS = 5000;

export type SandboxResult = Record<string, unknown>;

/**
 * Runs the AI's `db_query` operations (the seed's `executeAIOperation`):
 * validates them, runs them with the raw driver on the app's connection, and
 * answers with the seed's shapes (`{ rows }`, `{ row }`, `{ insertedId }`…) or
 * `{ error }`. Never throws. Results are plain JSON (ids as hex strings, dates
 * as ISO strings), capped in count and size, and scrubbed of secrets.
 */
@Injectable()
export class MongoSandboxService {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly secrets: SandboxSecrets,
  ) {}

  async execute(raw: unknown): Promise<SandboxResult> {
    const checked = validateMongoOperation(raw);
    if (!checked.valid) return { error: checked.error };
    // Fetched while the query runs; a failure here must not leak anything, so it fails the call.
    const secrets = this.secrets.currentSecrets();
    secrets.catch(() => undefined);
    try {
      return await this.run(checked.op, secrets);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const redactor = new ResultRedactor(await secrets.catch(() => []), false);
      return {
        error: redactor.scrub(message) || 'The database operation failed.',
      };
    }
  }

  /** Plain JSON copies of documents of `collection`, redacted exactly as `execute` does (for the console's data browser). */
  async toPlainDocuments(
    collection: string,
    docs: readonly MongoDocument[],
  ): Promise<Array<Record<string, unknown>>> {
    const redactor = new ResultRedactor(
      await this.secrets.currentSecrets(),
      collection === SETTINGS_COLLECTION,
    );
    return docs.map((doc) => redactor.plain(doc) as Record<string, unknown>);
  }

  private async run(
    op: MongoOperation,
    secrets: Promise<string[]>,
  ): Promise<SandboxResult> {
    const db = this.connection.db;
    if (!db) throw new Error('The database is not connected.');
    if (op.operation === 'listCollections') {
      const collections = await db
        .listCollections({}, { nameOnly: true })
        .toArray();
      return {
        collections: collections
          .map((c) => c.name)
          .filter((name) => collectionAccess(name) !== 'hidden')
          .sort(),
      };
    }
    const collection = db.collection(op.collection);
    const options = op.options ?? {};
    const filter = op.filter ?? {};
    switch (op.operation) {
      case 'find': {
        const docs = await collection
          .find(filter, {
            projection: options.projection,
            sort: options.sort as mongo.Sort | undefined,
            skip: options.skip,
            limit: readLimit(options.limit),
            maxTimeMS: QUERY_TIME_LIMIT_MS,
          })
          .toArray();
        return this.rows(op.collection, docs, await secrets);
      }
      case 'findOne': {
        const doc = await collection.findOne(filter, {
          projection: options.projection,
          sort: options.sort as mongo.Sort | undefined,
          skip: options.skip,
          maxTimeMS: QUERY_TIME_LIMIT_MS,
        });
        const redactor = new ResultRedactor(
          await secrets,
          op.collection === SETTINGS_COLLECTION,
        );
        const row = doc === null ? null : redactor.plain(doc);
        if (redactor.bytes > RESULT_BYTE_CAP) {
          return {
            row: null,
            truncated: true,
            note: `The document is larger than ${kib(RESULT_BYTE_CAP)}; ask for fewer fields with options.projection.`,
          };
        }
        return { row };
      }
      case 'aggregate': {
        const pipeline = [
          ...(op.pipeline ?? []),
          { $limit: readLimit(options.limit) },
        ];
        const docs = await collection
          .aggregate(pipeline, { maxTimeMS: QUERY_TIME_LIMIT_MS })
          .toArray();
        return this.rows(op.collection, docs, await secrets);
      }
      case 'countDocuments': {
        const count = await collection.countDocuments(filter, {
          limit: options.limit,
          skip: options.skip,
          maxTimeMS: QUERY_TIME_LIMIT_MS,
        });
        return { count };
      }
      case 'insertOne': {
        const result = await collection.insertOne(op.data as MongoDocument);
        return { insertedId: idValue(result.insertedId) };
      }
      case 'insertMany': {
        const result = await collection.insertMany(op.data as MongoDocument[]);
        return { insertedCount: result.insertedCount };
      }
      case 'updateOne':
      case 'updateMany': {
        const update = op.update as MongoDocument | MongoDocument[];
        const upsert = options.upsert ?? false;
        const result =
          op.operation === 'updateOne'
            ? await collection.updateOne(filter, update, { upsert })
            : await collection.updateMany(filter, update, { upsert });
        const answer: SandboxResult = {
          matchedCount: result.matchedCount,
          modifiedCount: result.modifiedCount,
        };
        if (result.upsertedId !== null && result.upsertedId !== undefined)
          answer['upsertedId'] = idValue(result.upsertedId);
        return answer;
      }
      case 'deleteOne': {
        const result = await collection.deleteOne(filter);
        return { deletedCount: result.deletedCount };
      }
      case 'deleteMany': {
        const result = await collection.deleteMany(filter);
        return { deletedCount: result.deletedCount };
      }
      case 'createCollection': {
        await db.createCollection(op.collection, {
          ...(options.capped !== undefined && { capped: options.capped }),
          ...(options.size !== undefined && { size: options.size }),
          ...(options.max !== undefined && { max: options.max }),
        });
        return { success: true };
      }
      case 'createIndex': {
        await collection.createIndex(op.keys as mongo.IndexSpecification, {
          ...(options.name !== undefined && { name: options.name }),
          ...(options.unique !== undefined && { unique: options.unique }),
          ...(options.sparse !== undefined && { sparse: options.sparse }),
          ...(options.expireAfterSeconds !== undefined && {
            expireAfterSeconds: options.expireAfterSeconds,
          }),
          ...(options.partialFilterExpression !== undefined && {
            partialFilterExpression: options.partialFilterExpression,
          }),
        });
        return { success: true };
      }
    }
  }

  /** `{ rows }`, dropping rows from the end once the serialised result would pass the byte cap. */
  private rows(
    collection: string,
    docs: MongoDocument[],
    secrets: string[],
  ): SandboxResult {
    const redactor = new ResultRedactor(
      secrets,
      collection === SETTINGS_COLLECTION,
    );
    const rows: unknown[] = [];
    for (const doc of docs) {
      const row = redactor.plain(doc);
      if (redactor.bytes > RESULT_BYTE_CAP) {
        return {
          rows,
          truncated: true,
          note:
            `Only ${rows.length} of ${docs.length} documents fit in ${kib(RESULT_BYTE_CAP)}. Narrow the query: ` +
            'a projection with fewer fields, a stricter filter, or a smaller options.limit with options.skip to page.',
        };
      }
      rows.push(row);
    }
    return { rows };
  }
}

function readLimit(limit: number | undefined): number {
  return limit === undefined
    ? MAX_RESULT_DOCUMENTS
    : Math.min(limit, MAX_RESULT_DOCUMENTS);
}

function idValue(id: unknown): unknown {
  return new ResultRedactor([], false).plain(id);
}

function kib(bytes: number): string {
  return `${bytes / 1024} KiB`;
}
