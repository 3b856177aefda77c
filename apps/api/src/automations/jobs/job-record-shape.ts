import { Types } from 'mongoose';
import type { CronJobRecord } from './schemas/cron-job.schema';

/**
 * Reading `cronjobs` documents defensively: the AI could write this collection
 * through db_query before its writes went through CronJobsService, so a stored
 * document may have a string or number `_id` or fields of the wrong type. Such
 * a job is listed (with a scheduleError), can be deleted, and is never run.
 */

/** The id as the API shows it: hex for an ObjectId, else the value as text. */
export function jobIdOf(id: unknown): string {
  return id instanceof Types.ObjectId ? id.toHexString() : String(id);
}

/** The stored `_id` values an API id may stand for (an ObjectId's hex, a string, a number). */
export function jobIdCandidates(id: string): unknown[] {
  const candidates: unknown[] = [id];
  if (/^[0-9a-f]{24}$/i.test(id)) candidates.unshift(new Types.ObjectId(id));
  if (/^-?\d+(\.\d+)?$/.test(id) && Number.isFinite(Number(id)))
    candidates.push(Number(id));
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
