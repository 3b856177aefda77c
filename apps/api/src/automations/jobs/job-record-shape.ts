import { Types, mongo } from 'mongoose';
import type { CronJobRecord } from './schemas/cron-job.schema';

/**
 * Reading `cronjobs` documents defensively: the AI could write this collection
 * through db_query before its writes went through CronJobsService, so a stored
 * document may have a string or number `_id` or fields of the wrong type. Such
 * a job is listed (with a scheduleError), can be deleted, and is never run.
 */

/** Prefix of the API id of a job whose `_id` is neither an ObjectId, a string nor a number (an object, a date, a boolean…). */
const EJSON_ID_PREFIX = 'ejson:';

/** The id as the API shows it: hex for an ObjectId, the text of a string or number, else `ejson:` and its Extended JSON. */
export function jobIdOf(id: unknown): string {
  if (id instanceof Types.ObjectId) return id.toHexString();
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  return EJSON_ID_PREFIX + mongo.BSON.EJSON.stringify(id, { relaxed: false });
}

/** The stored `_id` values an API id may stand for (an ObjectId's hex, a string, a number, an `ejson:` value). */
export function jobIdCandidates(id: string): unknown[] {
  const candidates: unknown[] = [id];
  if (/^[0-9a-f]{24}$/i.test(id)) candidates.unshift(new Types.ObjectId(id));
  if (/^-?\d+(\.\d+)?$/.test(id) && Number.isFinite(Number(id)))
    candidates.push(Number(id));
  if (id.startsWith(EJSON_ID_PREFIX)) {
    try {
      candidates.push(
        mongo.BSON.EJSON.parse(id.slice(EJSON_ID_PREFIX.length), {
          relaxed: false,
        }),
      );
    } catch {
      // Not Extended JSON: only the plain string can match.
    }
  }
  return candidates;
}

/** Why a stored job cannot be scheduled because of its shape (empty when it is well-formed). */
export function jobShapeProblems(raw: CronJobRecord): string[] {
  const problems: string[] = [];
  if (!(raw._id instanceof Types.ObjectId))
    problems.push('its id is not an ObjectId');
  for (const key of ['name', 'instruction', 'cronExpression'] as const) {
    if (typeof raw[key] !== 'string' || !(raw[key] as string).trim())
      problems.push(`${key} is not a non-empty text`);
  }
  const enabled: unknown = raw.enabled;
  if (enabled !== undefined && typeof enabled !== 'boolean')
    problems.push('enabled is not true or false');
  const chatId: unknown = raw.chatId;
  if (
    chatId !== undefined &&
    chatId !== null &&
    !(chatId instanceof Types.ObjectId)
  )
    problems.push('chatId is not a chat id');
  return problems;
}

export function malformedJobError(problems: string[]): string {
  return `This job was stored in a shape the scheduler cannot run (${problems.join('; ')}). Delete it and create it again.`;
}
