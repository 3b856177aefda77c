import {
  AI_COLLECTION_PREFIX,
  AI_MANAGED_COLLECTIONS,
} from '@metatronos/shared-types';
import { MONGO_OPERATIONS } from './mongo-operation';
import { MAX_RESULT_DOCUMENTS } from './mongo-sandbox.service';
import { RESULT_BYTE_CAP } from './result-redactor';

/** What the model reads about `db_query` (kept short: it is sent with every turn). */
export const DB_QUERY_TOOL_DESCRIPTION =
  `Run one MongoDB operation on your database: ${MONGO_OPERATIONS.join(', ')} ` +
  '(listCollections ignores collection). ' +
  `Read any collection; write only ${AI_MANAGED_COLLECTIONS.join(', ')} and collections named '${AI_COLLECTION_PREFIX}' + a name ` +
  `(e.g. ${AI_COLLECTION_PREFIX}books for a new kind of data); in cronjobs only name, instruction, cronExpression, enabled. ` +
  `Reads return at most ${MAX_RESULT_DOCUMENTS} documents and about ${RESULT_BYTE_CAP / 1024} KiB (page with options.limit/skip). ` +
  'Results are plain JSON (ObjectIds as hex, dates as ISO strings); to match or store them write ' +
  '{"$oid": "<24 hex>"} and {"$date": "2025-01-31T09:00:00Z"}. ' +
  '$where, $function, $accumulator, $out, $merge and secret settings fields are refused; API keys come back masked. ' +
  `After creating or changing an ${AI_COLLECTION_PREFIX} collection, document it with update_db_schema. ` +
  'Errors answer {"error": "..."}.';
