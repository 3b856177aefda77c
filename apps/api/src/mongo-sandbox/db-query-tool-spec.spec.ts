import { checkToolArguments } from '../ai-tools/tool-arguments';
import {
  DB_QUERY_PARAMETERS,
  DB_QUERY_TOOL_DESCRIPTION,
} from './db-query-tool-spec';
import { MONGO_OPERATIONS } from './mongo-operation';

describe('db_query tool definition', () => {
  it('tells the model the rules in under 1,200 characters', () => {
    expect(DB_QUERY_TOOL_DESCRIPTION.length).toBeLessThanOrEqual(1200);
    for (const operation of MONGO_OPERATIONS)
      expect(DB_QUERY_TOOL_DESCRIPTION).toContain(operation);
    for (const fact of [
      "'ai_'",
      'master, contacts, schedule, cronjobs',
      '100 documents',
      '{"$oid"',
      '{"$date"',
      'update_db_schema',
    ]) {
      expect(DB_QUERY_TOOL_DESCRIPTION).toContain(fact);
    }
  });

  it('stays inside the JSON Schema subset Gemini accepts', () => {
    const text = JSON.stringify(DB_QUERY_PARAMETERS);
    for (const keyword of [
      'additionalProperties',
      'oneOf',
      'anyOf',
      'allOf',
      '$ref',
    ])
      expect(text).not.toContain(`"${keyword}"`);
    expect(DB_QUERY_PARAMETERS.required).toEqual(['operation', 'collection']);
    // data and update take an object or an array: described in text, no type union.
    const properties = DB_QUERY_PARAMETERS.properties as Record<
      string,
      { type?: unknown }
    >;
    expect(properties['data'].type).toBeUndefined();
    expect(properties['update'].type).toBeUndefined();
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
  ])('lets the tool registry pass %j through to the sandbox', (args) => {
    expect(checkToolArguments(DB_QUERY_PARAMETERS, args)).toBeNull();
  });
});
