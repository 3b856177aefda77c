import { Injectable } from '@nestjs/common';
import {
  PULSE_NOTES_MAX_LENGTH,
  PULSES_PER_DAY_CHOICES,
  type PulseView,
} from '@metatronos/shared-types';
import { AiToolProvider, toolError, type AiTool } from '../../ai-tools/ai-tool';
import { TOOL_FIELD_NAMES } from './pulse-settings-input';
import { PulseScheduler } from './pulse-scheduler';
import { PulseService } from './pulse.service';

const ACTIONS = ['update_notes', 'get_config', 'update_config'] as const;

/** The seed's manage_pulse: continuity notes and the heartbeat's configuration. */
@AiToolProvider()
@Injectable()
export class ManagePulseTool implements AiTool {
  readonly definition = {
    name: 'manage_pulse',
    description:
      'Manage Pulse, your autonomous heartbeat that runs you on your own several times a day. ' +
      `update_notes saves continuity notes for your next pulse (replaces them; at most ${PULSE_NOTES_MAX_LENGTH} characters, longer is cut). ` +
      'get_config returns the configuration, pulses remaining today, the next pulse time and the interval. ' +
      `update_config changes any of enabled, active_days (0 = Sunday … 6 = Saturday), pulses_per_day (${PULSES_PER_DAY_CHOICES.join(', ')}) ` +
      'and quiet_hours (list of {start, end} in HH:mm local time; a range may cross midnight). Change the configuration only when the owner asks.',
    parameters: {
      type: 'object' as const,
      properties: {
        action: {
          type: 'string',
          enum: [...ACTIONS],
          description: 'What to do',
        },
        notes: {
          type: 'string',
          description: 'update_notes: the complete new notes',
        },
        enabled: {
          type: 'boolean',
          description: 'update_config: turn Pulse on or off',
        },
        active_days: {
          type: 'array',
          items: { type: 'integer', minimum: 0, maximum: 6 },
          description: 'update_config: weekdays Pulse runs on',
        },
        pulses_per_day: {
          type: 'integer',
          description: `update_config: pulses a day, one of ${PULSES_PER_DAY_CHOICES.join(', ')}`,
        },
        quiet_hours: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              start: { type: 'string', description: 'HH:mm' },
              end: { type: 'string', description: 'HH:mm' },
            },
            required: ['start', 'end'],
          },
          description: 'update_config: times without pulses',
        },
      },
      required: ['action'],
    },
  };
  readonly promptLine =
    'save continuity notes for your next pulse, read or change the Pulse heartbeat configuration.';

  constructor(
    private readonly pulse: PulseService,
    private readonly scheduler: PulseScheduler,
  ) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    switch (args['action']) {
      case 'update_notes': {
        if (typeof args['notes'] !== 'string')
          return toolError('update_notes needs notes (the complete new text)');
        const state = await this.pulse.updateNotes(args['notes'], 'ai');
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
          enabled: args['enabled'],
          activeDays: args['active_days'],
          pulsesPerDay: args['pulses_per_day'],
          quietHours: args['quiet_hours'],
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
      default:
        return toolError(
          `Unknown action "${String(args['action'])}": use one of ${ACTIONS.join(', ')}`,
        );
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
