import { createHash } from 'node:crypto';
import { Types, mongo } from 'mongoose';
import {
  DEFAULT_JOB_MAX_ROUNDS,
  DEFAULT_JOB_MAX_TOKENS_PER_RUN,
  JOB_MAX_ROUNDS_MAX,
  JOB_MAX_ROUNDS_MIN,
  JOB_MAX_TOKENS_PER_RUN_MAX,
  JOB_MAX_TOKENS_PER_RUN_MIN,
} from '@metatronos/shared-types';
import type {
  CronJobRecord,
  MailCursor,
  StoredMailTrigger,
} from './schemas/cron-job.schema';

/**
 * Reading `cronjobs` documents defensively: the AI could write this collection
 * through db_query before its writes went through CronJobsService, so a stored
 * document may have a string or number `_id` or fields of the wrong type. Such
 * a job is listed (with a scheduleError), can be deleted, and is never run.
 */

/** Prefix of the API id of a job whose `_id` is not an ObjectId, a plain string or a plain number (an object, a date, `""`, `"7"`…). */
const EJSON_ID_PREFIX = 'ejson:';
/** Prefix of the API id of a job whose `ejson:` id would be longer than MAX_JOB_ID_LENGTH: the SHA-256 of its Extended JSON. */
const HASH_ID_PREFIX = 'sha256:';
/** API ids are at most this long (a route parameter), so every stored job has one the console can send back. */
export const MAX_JOB_ID_LENGTH = 200;
const OBJECT_ID_HEX = /^[0-9a-f]{24}$/i;
const NUMBER_TEXT = /^-?\d+(\.\d+)?$/;

/**
 * The id as the API shows it, one per stored `_id` and never shared by two:
 * hex for an ObjectId; the text of a string or number when it reads back as
 * exactly that value; else `ejson:` and its Extended JSON, or `sha256:` and
 * that text's hash when it would be too long.
 */
export function jobIdOf(id: unknown): string {
  if (id instanceof Types.ObjectId) return id.toHexString();
  if (typeof id === 'string' && isPlainStringId(id)) return id;
  if (
    typeof id === 'number' &&
    Number.isFinite(id) &&
    NUMBER_TEXT.test(String(id))
  )
    return String(id);
  const ejson = mongo.BSON.EJSON.stringify(id, { relaxed: false });
  const shown = EJSON_ID_PREFIX + ejson;
  return shown.length <= MAX_JOB_ID_LENGTH
    ? shown
    : HASH_ID_PREFIX + createHash('sha256').update(ejson).digest('hex');
}

/** A string `_id` shown as itself: it cannot be read as an ObjectId, a number or a prefixed id, and fits in an API id. */
function isPlainStringId(id: string): boolean {
  return (
    id.length > 0 &&
    id.length <= MAX_JOB_ID_LENGTH &&
    !OBJECT_ID_HEX.test(id) &&
    !NUMBER_TEXT.test(id) &&
    !id.startsWith(EJSON_ID_PREFIX) &&
    !id.startsWith(HASH_ID_PREFIX)
  );
}

/** Whether an API id names a job only by the hash of its `_id` (found by comparing the stored ids, see `jobIdOf`). */
export function isHashedJobId(id: string): boolean {
  return id.startsWith(HASH_ID_PREFIX);
}

/** The stored `_id` an API id stands for (empty for a hashed or unreadable id): the inverse of `jobIdOf`. */
export function jobIdCandidates(id: string): unknown[] {
  if (OBJECT_ID_HEX.test(id)) return [new Types.ObjectId(id)];
  if (NUMBER_TEXT.test(id))
    return Number.isFinite(Number(id)) ? [Number(id)] : [];
  if (id.startsWith(EJSON_ID_PREFIX)) {
    try {
      return [
        mongo.BSON.EJSON.parse(id.slice(EJSON_ID_PREFIX.length), {
          relaxed: false,
        }),
      ];
    } catch {
      return [];
    }
  }
  if (isHashedJobId(id)) return [];
  return [id];
}

/** Why a stored job cannot be scheduled because of its shape (empty when it is well-formed). */
export function jobShapeProblems(raw: CronJobRecord): string[] {
  const problems: string[] = [];
  if (!(raw._id instanceof Types.ObjectId))
    problems.push('its id is not an ObjectId');
  for (const key of ['name', 'instruction'] as const) {
    if (typeof raw[key] !== 'string' || !(raw[key] as string).trim())
      problems.push(`${key} is not a non-empty text`);
  }
  // Exactly one trigger: a schedule or new mail.
  const cron: unknown = raw.cronExpression;
  const mail: unknown = raw.mailTrigger;
  const hasCron = typeof cron === 'string' && cron.trim() !== '';
  const hasMail = mail !== undefined && mail !== null;
  if (hasMail && !isStoredMailTrigger(mail))
    problems.push('mailTrigger is not an account id and a folder');
  if (hasCron && hasMail)
    problems.push('it has both a cronExpression and a mailTrigger');
  if (!hasCron && !hasMail)
    problems.push('cronExpression is not a non-empty text');
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

/** A stored mail trigger the watcher can use. */
export function isStoredMailTrigger(
  value: unknown,
): value is StoredMailTrigger {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return false;
  const { accountId, folder } = value as Record<string, unknown>;
  return (
    typeof accountId === 'string' &&
    accountId !== '' &&
    typeof folder === 'string' &&
    folder !== ''
  );
}

/** A stored cursor, or null when it is missing or was stored in another shape (the watch then starts at the top). */
export function storedMailCursor(value: unknown): MailCursor | null {
  if (typeof value !== 'object' || value === null) return null;
  const { uidValidity, lastUid } = value as Record<string, unknown>;
  return typeof uidValidity === 'string' &&
    typeof lastUid === 'number' &&
    Number.isInteger(lastUid) &&
    lastUid >= 0
    ? { uidValidity, lastUid }
    : null;
}

/** The job's per-run limits as stored (missing or malformed: the defaults). */
export function runLimitsOf(raw: {
  maxRounds?: unknown;
  maxTokensPerRun?: unknown;
}): {
  maxRounds: number;
  maxTokensPerRun: number;
} {
  const within = (
    value: unknown,
    min: number,
    max: number,
    fallback: number,
  ) =>
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= min &&
    value <= max
      ? value
      : fallback;
  return {
    maxRounds: within(
      raw.maxRounds,
      JOB_MAX_ROUNDS_MIN,
      JOB_MAX_ROUNDS_MAX,
      DEFAULT_JOB_MAX_ROUNDS,
    ),
    maxTokensPerRun: within(
      raw.maxTokensPerRun,
      JOB_MAX_TOKENS_PER_RUN_MIN,
      JOB_MAX_TOKENS_PER_RUN_MAX,
      DEFAULT_JOB_MAX_TOKENS_PER_RUN,
    ),
  };
}

/** The job's act-on-own tools as stored (a malformed value reads as none). */
export function actOnOwnToolsOf(raw: { actOnOwnTools?: unknown }): string[] {
  return Array.isArray(raw.actOnOwnTools)
    ? raw.actOnOwnTools.filter((n): n is string => typeof n === 'string')
    : [];
}
