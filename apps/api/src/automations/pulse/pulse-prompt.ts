import type { PulseView } from '@metatronos/shared-types';
import type { CombinedPromptOptions } from '../../system-instruction/combined-prompt.builder';
import { formatPromptDateTime } from '../../system-instruction/core-prompt-sections';

/**
 * The seed's buildPulsePrompt: the combined prompt (core instruction, memory,
 * database, tools, Pulse Status, notes) plus what an autonomous run needs to
 * plan: where it stands in the day and how to hand over to the next pulse.
 */
export function pulsePromptOptions(
  pulse: PulseView,
  now: Date,
): CombinedPromptOptions {
  const next = pulse.nextPulseAt
    ? formatPromptDateTime(new Date(pulse.nextPulseAt), pulse.timezone)
    : 'none scheduled';
  return {
    source: 'pulse',
    extra: [
      '## Pulse Execution',
      `This is an autonomous pulse, not a message from the owner: pulse ${pulse.pulsesToday} today, started ${formatPromptDateTime(now, pulse.timezone)}.`,
      `Pulses run every ${formatInterval(pulse.intervalMinutes)}; ${pulse.remaining} more ${pulse.remaining === 1 ? 'is' : 'are'} planned today; the next is ${next}.`,
      'Use this pulse for what moves the owner forward: check the schedule and contacts in your database, follow up on open items, prepare what the owner will need next.',
      'Do not repeat work an earlier pulse already did (see your pulse notes). Your reply is stored in the Pulse chat, where the owner can read it; keep it short, and say so plainly when nothing needed doing.',
      'Before you finish, save what the next pulse should know with manage_pulse (action "update_notes", at most 2000 characters).',
    ].join('\n'),
  };
}

export function formatInterval(minutes: number): string {
  return minutes < 60
    ? `${minutes} minutes`
    : minutes === 60
      ? 'hour'
      : `${minutes / 60} hours`;
}
