import { MONGO_OPERATIONS } from '../../mongo-sandbox/mongo-operation';
import { parseToolArguments, toolParameters } from '../tool-argument-schema';
import { DB_QUERY_ARGS } from './db-query.tool';

describe('db_query arguments', () => {
  const parameters = toolParameters('db_query', DB_QUERY_ARGS);
  const properties = parameters.properties as Record<
    string,
    Record<string, unknown>
  >;

  it("tells the provider the seed's MongoOperation at top level", () => {
    expect(parameters.required).toEqual(['operation', 'collection']);
    expect(properties['operation']).toMatchObject({
      type: 'string',
      enum: [...MONGO_OPERATIONS],
    });
    expect(Object.keys(properties)).toEqual([
      'operation',
      'collection',
      'filter',
      'update',
      'data',
      'pipeline',
      'options',
      'keys',
    ]);
    // data and update take an object or an array: said in words, no type union.
    expect(properties['data'].type).toBeUndefined();
    expect(properties['update'].type).toBeUndefined();
    expect(properties['data'].description).toContain('1 to 1000 documents');
    expect(properties['pipeline']).toMatchObject({
      type: 'array',
      items: { type: 'object' },
    });
    expect(
      (properties['options'].properties as Record<string, unknown>)['limit'],
    ).toEqual({ type: 'integer', description: 'At most 100.' });
  });

  it.each([
    { operation: 'insertMany', collection: 'ai_notes', data: [{ a: 1 }] },
    { operation: 'insertOne', collection: 'ai_notes', data: { a: 1 } },
    {
      operation: 'updateMany',
      collection: 'ai_notes',
      filter: {},
      update: [{ $set: { a: 1 } }],
    },
    {
      operation: 'aggregate',
      collection: 'chats',
      pipeline: [{ $count: 'n' }],
      options: { limit: 5 },
    },
    // Options the schema does not list still reach the sandbox, which names them in its refusal.
    {
      operation: 'createCollection',
      collection: 'ai_view',
      options: { viewOn: 'chats' },
    },
  ])('passes %j through to the sandbox unchanged', (args) => {
    expect(parseToolArguments(DB_QUERY_ARGS, args)).toEqual({
      ok: true,
      args,
    });
  });

  it.each([
    [
      { operation: 'find', collection: 'chats', filter: 'title = x' },
      "Argument 'filter' must be an object (got string)",
    ],
    [
      { operation: 'insertOne', collection: 'ai_x', data: 'a note' },
      "Argument 'data' must be a document (an object) or an array of documents",
    ],
    [
      { operation: 'updateOne', collection: 'ai_x', filter: {}, update: 5 },
      "Argument 'update' must be an update document (an object) or an update pipeline (an array)",
    ],
    [
      {
        operation: 'aggregate',
        collection: 'chats',
        pipeline: [{ $match: {} }, '$count'],
      },
      "Argument 'pipeline[1]' must be an object (got string)",
    ],
    [
      { operation: 'find', collection: 'chats', options: { limit: 'ten' } },
      "Argument 'options.limit' must be an integer (got string)",
    ],
    [
      { operation: 'drop', collection: 'chats' },
      `Argument 'operation' must be one of: ${MONGO_OPERATIONS.join(', ')}`,
    ],
    [{ operation: 'find' }, "Missing required argument 'collection'"],
  ])('refuses %j', (args, error) => {
    expect(parseToolArguments(DB_QUERY_ARGS, args)).toEqual({
      ok: false,
      error,
    });
  });
});
