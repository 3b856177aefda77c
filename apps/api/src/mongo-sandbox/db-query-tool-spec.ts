import {
  AI_COLLECTION_PREFIX,
  AI_MANAGED_COLLECTIONS,
  PROTECTED_COLLECTIONS,
} from '@metatronos/shared-types';
import { MONGO_OPERATIONS } from './mongo-operation';
import { MAX_RESULT_DOCUMENTS } from './mongo-sandbox.service';
import { RESULT_BYTE_CAP } from './result-redactor';

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
