import { BadRequestException } from '@nestjs/common';
import {
  PULSE_NOTES_MAX_LENGTH,
  PULSES_PER_DAY_CHOICES,
  type PulseSettings,
  type PulsesPerDay,
} from '@metatronos/shared-types';
import { quietHoursProblem } from '../schedule-math/pulse-schedule';

/** The field names a caller used: camelCase for REST, the seed's snake_case for manage_pulse. */
export interface PulseFieldNames {
  activeDays: string;
  pulsesPerDay: string;
  quietHours: string;
}

export const REST_FIELD_NAMES: PulseFieldNames = {
  activeDays: 'activeDays',
  pulsesPerDay: 'pulsesPerDay',
  quietHours: 'quietHours',
};
export const TOOL_FIELD_NAMES: PulseFieldNames = {
  activeDays: 'active_days',
  pulsesPerDay: 'pulses_per_day',
  quietHours: 'quiet_hours',
};

/**
 * Checks a partial PulseSettings; throws a 400 naming every problem, so nothing
 * is written. Notes over the limit are cut, not refused (the seed's rule).
 */
export function checkPulseInput(
  input: Partial<Record<keyof PulseSettings, unknown>>,
  names: PulseFieldNames,
  /** The registered modes a pulse may start in; omitted: any well-formed mode name (a stored document). */
  modes?: readonly string[],
): Partial<PulseSettings> {
  const problems: string[] = [];
  const fields: Partial<PulseSettings> = {};
  if (input.enabled !== undefined) {
    if (typeof input.enabled === 'boolean') fields.enabled = input.enabled;
    else problems.push('enabled must be true or false');
  }
  if (input.activeDays !== undefined) {
    const days = input.activeDays;
    if (
      !Array.isArray(days) ||
      days.some((d) => !Number.isInteger(d) || d < 0 || d > 6)
    ) {
      problems.push(
        `${names.activeDays} must be a list of weekday numbers from 0 (Sunday) to 6 (Saturday)`,
      );
    } else {
      fields.activeDays = [...new Set(days as number[])].sort((a, b) => a - b);
    }
  }
  if (input.pulsesPerDay !== undefined) {
    if (
      (PULSES_PER_DAY_CHOICES as readonly unknown[]).includes(
        input.pulsesPerDay,
      )
    )
      fields.pulsesPerDay = input.pulsesPerDay as PulsesPerDay;
    else
      problems.push(
        `${names.pulsesPerDay} must be one of ${PULSES_PER_DAY_CHOICES.join(', ')} (got ${JSON.stringify(input.pulsesPerDay)})`,
      );
  }
  if (input.quietHours !== undefined) {
    const problem = quietHoursProblem(input.quietHours);
    if (problem)
      problems.push(problem.replace(/^quiet_hours/, names.quietHours));
    else
      fields.quietHours = (input.quietHours as PulseSettings['quietHours']).map(
        ({ start, end }) => ({ start, end }),
      );
  }
  if (input.notes !== undefined) {
    if (typeof input.notes === 'string')
      fields.notes = truncateNotes(input.notes);
    else problems.push('notes must be a text');
  }
  if (input.mode !== undefined) {
    const ok =
      typeof input.mode === 'string' &&
      (modes
        ? modes.includes(input.mode)
        : /^[a-z][a-z0-9_]{0,31}$/.test(input.mode));
    if (ok) fields.mode = input.mode as string;
    else
      problems.push(
        `mode must be one of: ${(modes ?? []).join(', ')} (got ${JSON.stringify(input.mode)})`,
      );
  }
  if (problems.length) throw new BadRequestException(problems.join('; '));
  return fields;
}

export function truncateNotes(notes: string): string {
  return notes.length > PULSE_NOTES_MAX_LENGTH
    ? notes.slice(0, PULSE_NOTES_MAX_LENGTH)
    : notes;
}
