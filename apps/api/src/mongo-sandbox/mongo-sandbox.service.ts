import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection, mongo } from 'mongoose';
import { aggregateAll, countAll, findAll } from '../database/driver-collection';
import { SETTINGS_COLLECTION, collectionAccess } from './collection-access';
import {
  MONGO_DOCUMENT_WRITES,
  MONGO_WRITE_OPERATIONS as MONGO_WRITES,
  type MongoDocument,
  type MongoOperation,
} from './mongo-operation';
import { scopedFilter, scopedPipeline, type ReadScopes } from './read-scope';
import { RESULT_BYTE_CAP, ResultRedactor } from './result-redactor';
import {
  DELEGATED_WRITE_COLLECTIONS,
  NOTHING_VISIBLE,
  SCOPED_READ_COLLECTIONS,
  SandboxCollectionWriter,
  SandboxReadScope,
  type SandboxCaller,
  type SandboxResult,
} from './sandbox-collection-owners';
import { SandboxSecrets } from './sandbox-secrets';
import { validateMongoOperation } from './validate-mongo-operation';

/** Reads return at most this many documents; `options.limit` may lower it, never raise it. */
export const MAX_RESULT_DOCUMENTS = 100;
/** Server-side time limit of every read, count and aggregation. */
export const QUERY_TIME_LIMIT_MS = 5000;

export type { SandboxCaller, SandboxResult } from './sandbox-collection-owners';

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
    private readonly modules: ModuleRef,
  ) {}

  private writers: Map<string, SandboxCollectionWriter> | null = null;
  private scopes: Map<string, SandboxReadScope> | null = null;

  async execute(raw: unknown, caller?: SandboxCaller): Promise<SandboxResult> {
    const checked = validateMongoOperation(raw);
    if (!checked.valid) return { error: checked.error };
    // Fetched while the query runs; a failure here must not leak anything, so it fails the call.
    const secrets = this.secrets.currentSecrets();
    secrets.catch(() => undefined);
    try {
      const op = checked.op;
      if (
        DELEGATED_WRITE_COLLECTIONS.has(op.collection) &&
        MONGO_DOCUMENT_WRITES.has(op.operation)
      ) {
        const writer = this.owners().writers.get(op.collection);
        if (!writer)
          return {
            error: `Writes to '${op.collection}' are not available right now.`,
          };
        return await writer.write(op, caller);
      }
      return await this.run(op, secrets);
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

  /** The writers and read scopes other feature modules provide (found once, on first use). */
  private owners(): {
    writers: Map<string, SandboxCollectionWriter>;
    scopes: Map<string, SandboxReadScope>;
  } {
    if (!this.writers || !this.scopes) {
      this.writers = new Map(
        this.all(SandboxCollectionWriter).map((w) => [w.collection, w]),
      );
      this.scopes = new Map(
        this.all(SandboxReadScope).map((s) => [s.collection, s]),
      );
    }
    return { writers: this.writers, scopes: this.scopes };
  }

  private all<T>(token: abstract new (...args: never[]) => T): T[] {
    try {
      return this.modules.get(token, { strict: false, each: true });
    } catch {
      return [];
    }
  }

  /** The current filter of every scoped collection the operation could read (fail closed: nothing without a scope). */
  private async readScopes(op: MongoOperation): Promise<ReadScopes> {
    const scopes = new Map<string, MongoDocument>();
    const { scopes: providers } = this.owners();
    const reads =
      op.operation === 'aggregate' ||
      ((SCOPED_READ_COLLECTIONS.has(op.collection) ||
        providers.has(op.collection)) &&
        !MONGO_WRITES.has(op.operation));
    if (!reads) return scopes;
    for (const name of new Set([
      ...SCOPED_READ_COLLECTIONS,
      ...providers.keys(),
    ])) {
      const provider = providers.get(name);
      scopes.set(
        name,
        provider ? await provider.visibleFilter() : NOTHING_VISIBLE,
      );
    }
    return scopes;
  }

  private async run(
    op: MongoOperation,
    secrets: Promise<string[]>,
  ): Promise<SandboxResult> {
    const db = this.connection.db;
    if (!db) throw new Error('The database is not connected.');
    const scopes = await this.readScopes(op);
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
    const filter = scopedFilter(op.collection, op.filter ?? {}, scopes);
    switch (op.operation) {
      case 'find': {
        const docs = await findAll(collection, filter, {
          projection: options.projection,
          sort: options.sort,
          skip: options.skip,
          limit: readLimit(options.limit),
          maxTimeMS: QUERY_TIME_LIMIT_MS,
        });
        return this.rows(op.collection, docs, await secrets);
      }
      case 'findOne': {
        const [doc = null] = await findAll(collection, filter, {
          projection: options.projection,
          sort: options.sort,
          skip: options.skip,
          limit: 1,
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
          ...scopedPipeline(op.collection, op.pipeline ?? [], scopes),
          { $limit: readLimit(options.limit) },
        ];
        const docs = await aggregateAll(collection, pipeline, {
          maxTimeMS: QUERY_TIME_LIMIT_MS,
        });
        return this.rows(op.collection, docs, await secrets);
      }
      case 'countDocuments': {
        const count = await countAll(collection, filter, {
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
