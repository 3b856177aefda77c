import { Injectable } from '@nestjs/common';
import { AI_COLLECTION_PREFIX } from '@metatronos/shared-types';
import { z } from 'zod';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import { DB_QUERY_TOOL_DESCRIPTION } from '../../mongo-sandbox/db-query-tool-spec';
import { MONGO_OPERATIONS } from '../../mongo-sandbox/mongo-operation';
import { MongoSandboxService } from '../../mongo-sandbox/mongo-sandbox.service';
import { MAX_INSERT_DOCUMENTS } from '../../mongo-sandbox/validate-mongo-operation';
import { MAX_RESULT_DOCUMENTS } from '../../mongo-sandbox/mongo-sandbox.service';
import { MONGO_WRITE_OPERATIONS } from '../../mongo-sandbox/mongo-operation';
import { AiToolProvider, type AiTool, type AiToolContext } from '../ai-tool';

/** A free-form JSON object (a filter, a document, a stage): only its outer type is checked here. */
const document = () => z.record(z.string(), z.unknown());

function isObjectOrArray(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

/**
 * An object or an array, without a type union (`anyOf` is outside the JSON
 * Schema subset every provider accepts): the schema tells the model in words,
 * the check refuses anything else. What is inside is the sandbox's to check.
 */
const documentOrArray = (message: string) =>
  z.unknown().refine(isObjectOrArray, { error: message });

/**
 * The seed's MongoOperation at top level. The sandbox checks everything
 * inside the free-form parts (operators, collections, limits).
 */
export const DB_QUERY_ARGS = z.object({
  operation: z.enum(MONGO_OPERATIONS),
  collection: z
    .string()
    .describe(`e.g. contacts or ${AI_COLLECTION_PREFIX}notes`),
  filter: document()
    .optional()
    .describe(
      'find, findOne, countDocuments; required for update*/delete* ({} = all). E.g. {"name": "Ana"}',
    ),
  update: documentOrArray(
    'must be an update document (an object) or an update pipeline (an array)',
  )
    .optional()
    .describe(
      'update*: {"$set": {"city": "Paris"}} or a pipeline (array of $set/$unset stages)',
    ),
  data: documentOrArray(
    'must be a document (an object) or an array of documents',
  )
    .optional()
    .describe(
      `insertOne: a document. insertMany: an array of 1 to ${MAX_INSERT_DOCUMENTS} documents`,
    ),
  pipeline: z
    .array(document())
    .optional()
    .describe('aggregate stages, e.g. [{"$match": {…}}, {"$group": {…}}]'),
  // Loose: an option not listed here still reaches the sandbox, which names it in its refusal.
  options: z
    .looseObject({
      projection: document().optional(),
      sort: document().optional(),
      limit: z.int().optional().describe(`At most ${MAX_RESULT_DOCUMENTS}.`),
      skip: z.int().optional(),
      upsert: z.boolean().optional(),
      // The index and collection options are named in the description only (fewer tokens every
      // turn); the sandbox checks their names and types per operation and says what is wrong.
    })
    .optional()
    .describe(
      'find/findOne: projection, sort, limit, skip. countDocuments: limit, skip. aggregate: limit. update*: upsert. ' +
        'createIndex: name, unique, sparse, expireAfterSeconds, partialFilterExpression. createCollection: capped, size, max',
    ),
  keys: document().optional().describe('createIndex keys, e.g. {"name": 1}'),
});

@AiToolProvider()
@Injectable()
export class DbQueryTool implements AiTool<typeof DB_QUERY_ARGS> {
  readonly name = 'db_query';
  readonly modes = ['data'];
  readonly description = DB_QUERY_TOOL_DESCRIPTION;
  readonly schema = DB_QUERY_ARGS;
  readonly promptLine =
    'read and write your MongoDB database (documented above).';

  constructor(
    private readonly sandbox: MongoSandboxService,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
  ) {}

  /** Writing jobs or the memory through the database is what manage_cronjob and save_memory do. */
  effect(args: z.output<typeof DB_QUERY_ARGS>): 'schedule' | 'memory' | null {
    if (!MONGO_WRITE_OPERATIONS.has(args.operation)) return null;
    if (args.collection === 'cronjobs') return 'schedule';
    return args.collection === 'master' ? 'memory' : null;
  }

  summarize(args: z.output<typeof DB_QUERY_ARGS>): string {
    const { operation, collection, ...rest } = args;
    return `Database ${operation} on ${collection}: ${JSON.stringify(rest)}`;
  }

  async execute(
    args: z.output<typeof DB_QUERY_ARGS>,
    context?: AiToolContext,
  ): Promise<string> {
    const result = await this.sandbox.execute(
      args,
      context && {
        source: context.source,
        chatId: context.chatId,
        messageId: context.messageId,
      },
    );
    if (MONGO_WRITE_OPERATIONS.has(args.operation) && !('error' in result)) {
      this.events.emit('data.changed', {
        collection: args.collection,
        operation: args.operation,
        at: this.clock.now().toISOString(),
      });
    }
    return JSON.stringify(result);
  }
}
