import { DB_QUERY_TOOL_DESCRIPTION } from './db-query-tool-spec';
import { MONGO_OPERATIONS } from './mongo-operation';

describe('db_query tool description', () => {
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
});
