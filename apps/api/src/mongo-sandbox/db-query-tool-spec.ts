import {
  AI_COLLECTION_PREFIX,
  AI_MANAGED_COLLECTIONS,
  PROTECTED_COLLECTIONS,
} from '@metatronos/shared-types';
import type { JsonSchemaObject } from '../llm/llm-adapter';
import { MONGO_OPERATIONS } from './mongo-operation';
import { MAX_RESULT_DOCUMENTS } from './mongo-sandbox.service';
import { RESULT_BYTE_CAP } from './result-redactor';
import { MAX_INSERT_DOCUMENTS } from './validate-mongo-operation';

/** What the model reads about `db_query` (kept short: it is sent with every turn). */
export const DB_QUERY_TOOL_DESCRIPTION =
  `Run one MongoDB operation on your own database. Operations: ${MONGO_OPERATIONS.join(', ')} ` +
  '(listCollections ignores collection). ' +
  `You may read any collection. You may write only ${AI_MANAGED_COLLECTIONS.join(', ')} and collections whose name starts with ` +
  `'${AI_COLLECTION_PREFIX}' (create e.g. '${AI_COLLECTION_PREFIX}books' for a new kind of data); ` +
  `${PROTECTED_COLLECTIONS.join(', ')} are read-only. ` +
  'In cronjobs write only name, instruction, cronExpression, enabled (checked as manage_cronjob). ' +
  `Reads return at most ${MAX_RESULT_DOCUMENTS} documents and about ${RESULT_BYTE_CAP / 1024} KiB ` +
  '(options.limit lowers it, options.skip pages; narrow with a filter or options.projection). ' +
  'Results are plain JSON: ObjectIds come back as hex strings and dates as ISO strings. To match or store them, write ' +
  '{"$oid": "<24 hex>"} and {"$date": "2025-01-31T09:00:00Z"}. ' +
  'Server-side JavaScript ($where, $function, $accumulator), $out/$merge and the secret fields of settings are refused; ' +
  'API keys always come back masked. ' +
  `After you create an ${AI_COLLECTION_PREFIX} collection or change its fields, document it with update_db_schema. ` +
  'A refusal or failure answers {"error": "..."}.';

/** Arguments at top level, as the seed's MongoOperation. Kept to the subset of JSON Schema Gemini accepts. */
export const DB_QUERY_PARAMETERS: JsonSchemaObject = {
  type: 'object',
  properties: {
    operation: {
      type: 'string',
      enum: [...MONGO_OPERATIONS],
      description: 'The operation to run.',
    },
    collection: {
      type: 'string',
      description: `Collection name, e.g. contacts or ${AI_COLLECTION_PREFIX}notes.`,
    },
    filter: {
      type: 'object',
      description:
        'Query filter for find, findOne, countDocuments, updateOne/updateMany and deleteOne/deleteMany, e.g. {"name": "Ana"}. ' +
        'Required for updates and deletes ({} matches every document).',
    },
    update: {
      description:
        'updateOne/updateMany: an update document such as {"$set": {"city": "Paris"}}, or an update pipeline (an array of $set/$unset stages).',
    },
    data: {
      description: `insertOne: one document (an object). insertMany: an array of 1 to ${MAX_INSERT_DOCUMENTS} documents.`,
    },
    pipeline: {
      type: 'array',
      items: { type: 'object' },
      description:
        'aggregate: the stages, e.g. [{"$match": {"status": "confirmed"}}, {"$group": {"_id": "$contactId", "n": {"$sum": 1}}}].',
    },
    options: {
      type: 'object',
      description:
        'find/findOne: projection, sort, limit, skip. countDocuments: limit, skip. aggregate: limit. updateOne/updateMany: upsert. ' +
        'createIndex: name, unique, sparse, expireAfterSeconds, partialFilterExpression. createCollection: capped, size, max.',
      properties: {
        projection: {
          type: 'object',
          description: 'Fields to return, e.g. {"name": 1, "phones": 1}.',
        },
        sort: { type: 'object', description: 'e.g. {"start": 1}.' },
        limit: {
          type: 'integer',
          description: `At most ${MAX_RESULT_DOCUMENTS}.`,
        },
        skip: { type: 'integer' },
        upsert: { type: 'boolean' },
        name: { type: 'string' },
        unique: { type: 'boolean' },
        sparse: { type: 'boolean' },
        expireAfterSeconds: { type: 'integer' },
        partialFilterExpression: { type: 'object' },
        capped: { type: 'boolean' },
        size: { type: 'integer' },
        max: { type: 'integer' },
      },
    },
    keys: {
      type: 'object',
      description: 'createIndex: the index keys, e.g. {"name": 1}.',
    },
  },
  required: ['operation', 'collection'],
};
