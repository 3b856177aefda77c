import { BadRequestException } from '@nestjs/common';
import {
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  JOB_MAX_ROUNDS_MAX,
  JOB_MAX_ROUNDS_MIN,
  JOB_MAX_TOKENS_PER_RUN_MAX,
  JOB_MAX_TOKENS_PER_RUN_MIN,
  MAIL_TRIGGER_DEFAULT_FOLDER,
  MAIL_TRIGGER_FOLDER_MAX_LENGTH,
  type CreateCronJobRequest,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import { checkCronExpression } from '../schedule-math/cron-schedule';
import type { StoredMailTrigger } from './schemas/cron-job.schema';

/** The checked, trimmed fields of a create or update (only those given). */
export interface CronJobFields {
  name?: string;
  instruction?: string;
  /** null: the job is switched to its mail trigger. */
  cronExpression?: string | null;
  /** null: the job is switched to its schedule. The account is checked by the service. */
  mailTrigger?: StoredMailTrigger | null;
  enabled?: boolean;
  mode?: string;
  actOnOwnTools?: string[];
  maxRounds?: number;
  maxTokensPerRun?: number;
}

/** Why a tool cannot be in a job's `actOnOwnTools` (unknown, or one that grants), or null. */
export type ActOnOwnCheck = (name: string) => string | null;

export const MAX_ACT_ON_OWN_TOOLS = 50;

/**
 * Checks a create (name, instruction and exactly one trigger: cronExpression or
 * mailTrigger) or an update (any of them; one trigger switches the job to it) the same way for REST and the AI tool; throws a 400 naming every
 * problem, so nothing is written.
 */
export function checkCronJobInput(
  input: UpdateCronJobRequest | CreateCronJobRequest,
  mode: 'create' | 'update',
  timezone: string,
  now: Date,
  /** The registered modes a job may start in. */
  modes: readonly string[] = [],
  actOnOwnCheck: ActOnOwnCheck = () => 'no tool may act on its own here',
): CronJobFields {
  const problems: string[] = [];
  const fields: CronJobFields = {};
  const text = (
    key: 'name' | 'instruction' | 'cronExpression',
    max: number,
    label: string,
  ) => {
    const value = input[key];
    if (value === undefined) {
      if (mode === 'create') problems.push(`${label} is required`);
      return;
    }
    if (typeof value !== 'string' || !value.trim()) {
      problems.push(`${label} must be a non-empty text`);
      return;
    }
    const trimmed = value.trim();
    if (trimmed.length > max) {
      problems.push(
        `${label} is ${trimmed.length} characters; the limit is ${max}`,
      );
      return;
    }
    fields[key] = trimmed;
  };
  text('name', CRONJOB_NAME_MAX_LENGTH, 'name');
  text('instruction', CRONJOB_INSTRUCTION_MAX_LENGTH, 'instruction');
  const givenCron =
    input.cronExpression !== undefined && input.cronExpression !== null;
  const givenMail =
    input.mailTrigger !== undefined && input.mailTrigger !== null;
  if (givenCron && givenMail)
    problems.push(
      'give either a cron expression or a mail trigger, not both: a job has exactly one trigger',
    );
  else if (mode === 'create' && !givenCron && !givenMail)
    problems.push(
      'a trigger is required: a cron expression (a schedule) or a mail trigger (an email account and folder)',
    );
  else if (
    mode === 'update' &&
    input.cronExpression === null &&
    input.mailTrigger === null
  )
    problems.push('a job needs a trigger: a cron expression or a mail trigger');
  if (givenCron && !givenMail) {
    text('cronExpression', CRON_EXPRESSION_MAX_LENGTH, 'cron expression');
    if (fields.cronExpression !== undefined) fields.mailTrigger = null;
  }
  if (givenMail && !givenCron) {
    const trigger = mailTriggerFields(input.mailTrigger, problems);
    if (trigger) {
      fields.mailTrigger = trigger;
      fields.cronExpression = null;
    }
  }
  if (typeof fields.cronExpression === 'string') {
    const check = checkCronExpression(fields.cronExpression, timezone, now);
    if (!check.ok) problems.push(check.error);
  }
  if (input.enabled !== undefined) {
    if (typeof input.enabled !== 'boolean')
      problems.push('enabled must be true or false');
    else fields.enabled = input.enabled;
  }
  if (input.mode !== undefined) {
    if (typeof input.mode !== 'string' || !modes.includes(input.mode))
      problems.push(
        `mode must be one of: ${modes.join(', ')} (got "${String(input.mode).slice(0, 32)}")`,
      );
    else fields.mode = input.mode;
  }
  if (input.actOnOwnTools !== undefined) {
    const given: unknown = input.actOnOwnTools;
    const names = typeof given === 'string' ? [given] : given;
    if (
      !Array.isArray(names) ||
      names.some((n) => typeof n !== 'string') ||
      names.length > MAX_ACT_ON_OWN_TOOLS
    )
      problems.push(
        `actOnOwnTools must be a list of at most ${MAX_ACT_ON_OWN_TOOLS} tool names`,
      );
    else {
      const refused = (names as string[])
        .map((n) => actOnOwnCheck(n.trim()))
        .filter((p): p is string => p !== null);
      if (refused.length) problems.push(...refused);
      else
        fields.actOnOwnTools = [
          ...new Set((names as string[]).map((n) => n.trim())),
        ];
    }
  }
  const limit = wholeNumberIn(
    input.maxRounds,
    'maxRounds',
    JOB_MAX_ROUNDS_MIN,
    JOB_MAX_ROUNDS_MAX,
    problems,
  );
  if (limit !== undefined) fields.maxRounds = limit;
  const tokens = wholeNumberIn(
    input.maxTokensPerRun,
    'maxTokensPerRun',
    JOB_MAX_TOKENS_PER_RUN_MIN,
    JOB_MAX_TOKENS_PER_RUN_MAX,
    problems,
  );
  if (tokens !== undefined) fields.maxTokensPerRun = tokens;
  if (
    mode === 'update' &&
    !problems.length &&
    Object.keys(fields).length === 0
  ) {
    problems.push(
      'Nothing to change: give at least one of name, instruction, cron expression, mail trigger, enabled, mode, actOnOwnTools, maxRounds, maxTokensPerRun',
    );
  }
  if (problems.length) throw new BadRequestException(problems.join('; '));
  return fields;
}

/** `{ accountId, folder? }` trimmed, with the default folder; null (and a problem) when malformed. */
function mailTriggerFields(
  value: unknown,
  problems: string[],
): StoredMailTrigger | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push('mail trigger must be an object { accountId, folder }');
    return null;
  }
  const { accountId, folder } = value as Record<string, unknown>;
  const before = problems.length;
  if (typeof accountId !== 'string' || !accountId.trim())
    problems.push('mail trigger accountId must be an email account id');
  if (
    folder !== undefined &&
    (typeof folder !== 'string' ||
      !folder.trim() ||
      folder.trim().length > MAIL_TRIGGER_FOLDER_MAX_LENGTH)
  )
    problems.push(
      `mail trigger folder must be a folder name of at most ${MAIL_TRIGGER_FOLDER_MAX_LENGTH} characters (default ${MAIL_TRIGGER_DEFAULT_FOLDER})`,
    );
  if (problems.length > before) return null;
  return {
    accountId: (accountId as string).trim(),
    folder:
      typeof folder === 'string' ? folder.trim() : MAIL_TRIGGER_DEFAULT_FOLDER,
  };
}

/**
 * A whole number from `min` to `max`, given as a number or a numeric string
 * ("20", "200,000", "200 000" as people write them); undefined when not given.
 */
function wholeNumberIn(
  value: unknown,
  name: string,
  min: number,
  max: number,
  problems: string[],
): number | undefined {
  if (value === undefined) return undefined;
  const parsed =
    typeof value === 'number'
      ? value
      : typeof value === 'string' &&
          /^\s*\d{1,3}(?:[,_ ]?\d{3})*\s*$/.test(value)
        ? Number(value.replace(/[,_ ]/g, ''))
        : NaN;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    problems.push(
      `${name} must be a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')} (got ${JSON.stringify(value)?.slice(0, 32)})`,
    );
    return undefined;
  }
  return parsed;
}
