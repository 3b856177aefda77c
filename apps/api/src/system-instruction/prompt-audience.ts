import type { TurnSource } from '../llm/turn-source';

/**
 * Who reads the prompt of a turn. The owner in their own chat; an unattended
 * run (a cron job or a Pulse) that acts for the owner; a contact the owner
 * marked trusted; any other contact (untrusted content, never instructions).
 */
export type PromptAudience =
  | 'owner'
  | 'unattended'
  | 'trusted-contact'
  | 'untrusted-contact';

export const PROMPT_AUDIENCES: readonly PromptAudience[] = [
  'owner',
  'unattended',
  'trusted-contact',
  'untrusted-contact',
];

/** The owner and the runs that act for the owner: what most sections are written for. */
export const OWNER_AND_UNATTENDED: readonly PromptAudience[] = [
  'owner',
  'unattended',
];

/**
 * The audience of a turn from its source. An auto-reply is untrusted unless
 * the caller says the contact is trusted: the safe side when nobody says.
 */
export function audienceOf(
  source: TurnSource,
  trustedContact = false,
): PromptAudience {
  switch (source) {
    case 'chat':
    case 'voice':
      return 'owner';
    case 'cron':
    case 'pulse':
    case 'mcp':
    case 'memory':
      return 'unattended';
    case 'auto-reply':
      return trustedContact ? 'trusted-contact' : 'untrusted-contact';
  }
}
