import { Injectable } from '@nestjs/common';
import {
  PULSE_NOTES_MAX_LENGTH,
  PULSES_PER_DAY_CHOICES,
  QUIET_HOURS_MAX_RANGES,
  type PulseView,
} from '@metatronos/shared-types';
import { z } from 'zod';
import { AiToolProvider, toolError, type AiTool } from '../../ai-tools/ai-tool';
import { HM_PATTERN } from '../schedule-math/pulse-schedule';
import { TOOL_FIELD_NAMES } from './pulse-settings-input';
import { PulseScheduler } from './pulse-scheduler';
import { PulseService } from './pulse.service';

const ACTIONS = ['update_notes', 'get_config', 'update_config'] as const;

const WEEKDAY = 'must be a weekday number from 0 (Sunday) to 6 (Saturday)';
const time = (example: string) =>
  z
    .string()
    .regex(HM_PATTERN, { error: `must be a time like "${example}"` })
    .describe('HH:mm');

/**
 * Shapes, types and ranges are checked here (nested items too); the service
 * checks what spans fields (a range that starts where it ends) and cuts long notes.
 */
const MANAGE_PULSE_ARGS = z.object({
  action: z.enum(ACTIONS),
  notes: z.string().optional().describe('update_notes: the complete new notes'),
  enabled: z.boolean().optional(),
  active_days: z
    .array(z.int().min(0, { error: WEEKDAY }).max(6, { error: WEEKDAY }))
    .optional()
    .describe('0 = Sunday … 6 = Saturday'),
  // Not an enum: numeric enums are outside what every provider accepts; the choices are in the text.
  pulses_per_day: z
    .int()
    .refine((n) => (PULSES_PER_DAY_CHOICES as readonly number[]).includes(n), {
      error: (issue) =>
        `must be one of ${PULSES_PER_DAY_CHOICES.join(', ')} (got ${JSON.stringify(issue.input)})`,
    })
    .optional()
    .describe(`one of ${PULSES_PER_DAY_CHOICES.join(', ')}`),
  quiet_hours: z
    .array(z.strictObject({ start: time('22:00'), end: time('07:30') }))
    .max(QUIET_HOURS_MAX_RANGES)
    .optional()
    .describe('update_config: times without pulses'),
});

/** The seed's manage_pulse: continuity notes and the heartbeat's configuration. */
@AiToolProvider()
@Injectable()
export class ManagePulseTool implements AiTool<typeof MANAGE_PULSE_ARGS> {
  readonly name = 'manage_pulse';
  readonly modes = ['automations'];
  readonly description =
    'Pulse, your autonomous heartbeat, runs you several times a day. ' +
    `update_notes replaces your continuity notes for the next pulse (at most ${PULSE_NOTES_MAX_LENGTH} characters, longer is cut). ` +
    'get_config returns the configuration, pulses remaining today, the next pulse and the interval. ' +
    'update_config changes any of enabled, active_days, pulses_per_day, quiet_hours (local time; a range may cross midnight). ' +
    'Change the configuration only when the owner asks.';
  readonly schema = MANAGE_PULSE_ARGS;
  readonly promptLine =
    'save notes for your next pulse; read or change Pulse settings.';

  effect({
    action,
  }: z.output<typeof MANAGE_PULSE_ARGS>): 'schedule' | 'memory' | null {
    if (action === 'update_notes') return 'memory';
    return action === 'update_config' ? 'schedule' : null;
  }

  summarize(args: z.output<typeof MANAGE_PULSE_ARGS>): string {
    if (args.action === 'update_notes')
      return `Replace the Pulse notes with: “${args.notes ?? ''}”`;
    const { action: _action, notes: _notes, ...config } = args;
    return `Change the Pulse settings: ${JSON.stringify(config)}`;
  }

  constructor(
    private readonly pulse: PulseService,
    private readonly scheduler: PulseScheduler,
  ) {}

  async execute(args: z.output<typeof MANAGE_PULSE_ARGS>): Promise<string> {
    switch (args.action) {
      case 'update_notes': {
        if (args.notes === undefined)
          return toolError('update_notes needs notes (the complete new text)');
        const state = await this.pulse.updateNotes(args.notes, 'ai');
        return JSON.stringify({
          success: true,
          action: 'notes_updated',
          length: state.notes.length,
        });
      }
      case 'get_config':
        return JSON.stringify(
          toolPulse(await this.pulse.view(this.scheduler.isRunning())),
        );
      case 'update_config': {
        const request = {
          enabled: args.enabled,
          activeDays: args.active_days,
          pulsesPerDay: args.pulses_per_day,
          quietHours: args.quiet_hours,
        };
        if (Object.values(request).every((v) => v === undefined)) {
          return toolError(
            'update_config needs at least one of enabled, active_days, pulses_per_day, quiet_hours',
          );
        }
        await this.pulse.update(request, 'ai', TOOL_FIELD_NAMES);
        return JSON.stringify({
          success: true,
          action: 'config_updated',
          pulse: toolPulse(await this.pulse.view(this.scheduler.isRunning())),
        });
      }
    }
  }
}

/** The seed's PulseSettings (snake_case) merged with the computed fields. */
function toolPulse(view: PulseView) {
  return {
    enabled: view.enabled,
    active_days: view.activeDays,
    pulses_per_day: view.pulsesPerDay,
    quiet_hours: view.quietHours,
    notes: view.notes,
    pulses_today: view.pulsesToday,
    last_pulse_at: view.lastPulseAt,
    timezone: view.timezone,
    remaining: view.remaining,
    nextPulseAt: view.nextPulseAt,
    intervalMinutes: view.intervalMinutes,
  };
}
