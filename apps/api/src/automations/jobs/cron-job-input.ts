import { BadRequestException } from '@nestjs/common';
import {
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  type CreateCronJobRequest,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import { checkCronExpression } from '../schedule-math/cron-schedule';

/** The checked, trimmed fields of a create or update (only those given). */
export interface CronJobFields {
  name?: string;
  instruction?: string;
  cronExpression?: string;
  enabled?: boolean;
  mode?: string;
}

/**
 * Checks a create (all of name, instruction, cronExpression) or an update (any
 * of them) the same way for REST and the AI tool; throws a 400 naming every
 * problem, so nothing is written.
 */
export function checkCronJobInput(
  input: UpdateCronJobRequest | CreateCronJobRequest,
  mode: 'create' | 'update',
  timezone: string,
  now: Date,
  /** The registered modes a job may start in. */
  modes: readonly string[] = [],
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
  text('cronExpression', CRON_EXPRESSION_MAX_LENGTH, 'cron expression');
  if (fields.cronExpression !== undefined) {
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
  if (
    mode === 'update' &&
    !problems.length &&
    Object.keys(fields).length === 0
  ) {
    problems.push(
      'Nothing to change: give at least one of name, instruction, cron expression, enabled, mode',
    );
  }
  if (problems.length) throw new BadRequestException(problems.join('; '));
  return fields;
}
