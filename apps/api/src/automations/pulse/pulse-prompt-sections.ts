import { Injectable } from '@nestjs/common';
import {
  formatActiveDays,
  formatQuietHours,
} from '../schedule-math/pulse-schedule';
import { formatPromptDateTime } from '../../system-instruction/core-prompt-sections';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../../system-instruction/prompt-section';
import { OWNER_AND_UNATTENDED } from '../../system-instruction/prompt-audience';
import { formatInterval } from './pulse-prompt';
import { computePulseView, PulseService } from './pulse.service';

/** Pulse as the prompt shows it at the turn's time, in the owner's zone. */
async function pulseViewAt(
  pulse: PulseService,
  { now, timezone }: PromptContext,
) {
  return computePulseView(await pulse.state(), timezone, now, false);
}

/** Pulse's blocks are for the `automations` mode, and for a pulse itself whatever mode it runs in. */
function aboutPulse({ mode, source }: PromptContext): boolean {
  return mode === 'automations' || source === 'pulse';
}

/**
 * `## Pulse Status`: the heartbeat's configuration, in the automations mode and every pulse. Only what changes when the owner
 * (or the AI) edits Pulse: the counters that move with every pulse are in `## Pulse Counters`, at the end.
 */
@PromptSectionProvider()
@Injectable()
export class PulseStatusPromptSection implements PromptSection {
  readonly id = 'pulse-status';
  readonly order = 50;
  readonly audiences = OWNER_AND_UNATTENDED;

  constructor(private readonly pulse: PulseService) {}

  async render(context: PromptContext): Promise<string | null> {
    if (!aboutPulse(context)) return null;
    const pulse = await pulseViewAt(this.pulse, context);
    return [
      '## Pulse Status',
      `- Pulse (your autonomous heartbeat): ${pulse.enabled ? 'enabled' : 'disabled'}`,
      `- Interval: every ${formatInterval(pulse.intervalMinutes)} (${pulse.pulsesPerDay} a day)`,
      `- Active days: ${formatActiveDays(pulse.activeDays)}`,
      `- Quiet hours: ${formatQuietHours(pulse.quietHours)}`,
      pulse.notes
        ? '- Continuity notes: below, under "Your Pulse Notes"'
        : '- Continuity notes: none yet (manage_pulse action "update_notes")',
    ].join('\n');
  }
}

/**
 * `## Pulse Counters`: pulses fired and remaining today, the last and the next pulse. They change
 * with every pulse (and the next pulse with the clock), so they come after every stable section.
 */
@PromptSectionProvider()
@Injectable()
export class PulseCountersPromptSection implements PromptSection {
  readonly id = 'pulse-counters';
  readonly order = 900;
  readonly audiences = OWNER_AND_UNATTENDED;

  constructor(private readonly pulse: PulseService) {}

  async render(context: PromptContext): Promise<string | null> {
    if (!aboutPulse(context)) return null;
    const { timezone } = context;
    const pulse = await pulseViewAt(this.pulse, context);
    const at = (iso: string | null, none: string) =>
      iso ? formatPromptDateTime(new Date(iso), timezone) : none;
    return [
      '## Pulse Counters',
      `- Pulses today: ${pulse.pulsesToday} fired, ${pulse.remaining} remaining`,
      `- Last pulse: ${at(pulse.lastPulseAt, 'never')}`,
      `- Next pulse: ${at(pulse.nextPulseAt, pulse.enabled ? 'none scheduled (no active day or quiet all day)' : 'none (Pulse is disabled)')}`,
    ].join('\n');
  }
}

/** `## Your Pulse Notes`: what the AI left for its next pulse; only when there are notes. */
@PromptSectionProvider()
@Injectable()
export class PulseNotesPromptSection implements PromptSection {
  readonly id = 'pulse-notes';
  readonly order = 51;
  readonly audiences = OWNER_AND_UNATTENDED;

  constructor(private readonly pulse: PulseService) {}

  async render(context: PromptContext): Promise<string | null> {
    if (!aboutPulse(context)) return null;
    const { notes } = await this.pulse.state();
    return notes.trim() ? `## Your Pulse Notes\n${notes.trim()}` : null;
  }
}
