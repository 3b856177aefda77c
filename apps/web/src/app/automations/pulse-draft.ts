import {
  PULSE_NOTES_MAX_LENGTH,
  QUIET_HOURS_MAX_RANGES,
  type PulseSettings,
  type PulseView,
  type PulsesPerDay,
  type QuietHoursRange,
  type UpdatePulseRequest,
} from '@metatronos/shared-types';
import { quietHoursError } from './automation-format';

/** One quiet-hours row being edited (`key` keeps its identity in the template). */
export interface QuietHoursRow extends QuietHoursRange {
  key: number;
}

/** The Pulse settings form. */
export interface PulseDraft {
  enabled: boolean;
  activeDays: number[];
  pulsesPerDay: PulsesPerDay;
  quietHours: QuietHoursRow[];
  notes: string;
  /** The mode every pulse starts in. */
  mode: string;
}

let nextRowKey = 1;

export function quietHoursRow(
  range: QuietHoursRange = { start: '22:00', end: '07:00' },
): QuietHoursRow {
  return { key: nextRowKey++, start: range.start, end: range.end };
}

/** The settings part of the server's view. */
export function pulseSettings(view: PulseView): PulseSettings {
  return {
    enabled: view.enabled,
    activeDays: view.activeDays,
    pulsesPerDay: view.pulsesPerDay,
    quietHours: view.quietHours,
    notes: view.notes,
    mode: view.mode,
  };
}

export function pulseDraftFrom(settings: PulseSettings): PulseDraft {
  return {
    enabled: settings.enabled,
    activeDays: [...settings.activeDays].sort((a, b) => a - b),
    pulsesPerDay: settings.pulsesPerDay,
    quietHours: settings.quietHours.map((range) => quietHoursRow(range)),
    notes: settings.notes,
    mode: settings.mode,
  };
}

function sameDays(a: number[], b: number[]): boolean {
  const sorted = (days: number[]) =>
    [...new Set(days)].sort((x, y) => x - y).join(',');
  return sorted(a) === sorted(b);
}

function sameRanges(a: QuietHoursRange[], b: QuietHoursRange[]): boolean {
  return (
    a.length === b.length &&
    a.every((range, i) => range.start === b[i].start && range.end === b[i].end)
  );
}

/** The PATCH body: only the fields of the draft that differ from `base` (what the draft started from). */
export function pulseChanges(
  base: PulseSettings,
  draft: PulseDraft,
): UpdatePulseRequest {
  const changes: UpdatePulseRequest = {};
  if (draft.enabled !== base.enabled) changes.enabled = draft.enabled;
  if (!sameDays(draft.activeDays, base.activeDays))
    changes.activeDays = [...draft.activeDays].sort((a, b) => a - b);
  if (draft.pulsesPerDay !== base.pulsesPerDay)
    changes.pulsesPerDay = draft.pulsesPerDay;
  if (draft.mode !== base.mode) changes.mode = draft.mode;
  const quietHours = draft.quietHours.map(({ start, end }) => ({ start, end }));
  if (!sameRanges(quietHours, base.quietHours)) changes.quietHours = quietHours;
  if (draft.notes !== base.notes) changes.notes = draft.notes;
  return changes;
}

/** Which settings differ between two versions (to say what changed elsewhere). */
export function changedSettingFields(
  a: PulseSettings,
  b: PulseSettings,
): (keyof PulseSettings)[] {
  return Object.keys(
    pulseChanges(a, pulseDraftFrom(b)),
  ) as (keyof PulseSettings)[];
}

/** What blocks saving the draft: row errors by key, and form-wide messages. */
export function pulseDraftErrors(draft: PulseDraft): {
  rows: Map<number, string>;
  form: string[];
} {
  const rows = new Map<number, string>();
  for (const row of draft.quietHours) {
    const error = quietHoursError(row);
    if (error) rows.set(row.key, error);
  }
  const form: string[] = [];
  if (draft.quietHours.length > QUIET_HOURS_MAX_RANGES)
    form.push(`At most ${QUIET_HOURS_MAX_RANGES} quiet-hour ranges.`);
  if (draft.notes.length > PULSE_NOTES_MAX_LENGTH) {
    form.push(
      `The notes are ${draft.notes.length - PULSE_NOTES_MAX_LENGTH} characters too long.`,
    );
  }
  return { rows, form };
}
