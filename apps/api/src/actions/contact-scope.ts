import type { AiTool } from '../ai-tools/ai-tool';
import type { ContactScope, ToolTurn } from './tool-turn';

/** Tools of the messaging channels: in a contact's turn each must say which chats it acts in. */
const CHANNEL_TOOL = /^(whatsapp|telegram|contacts)_/;

const CHANNEL_WORDS = { whatsapp: 'WhatsApp', telegram: 'Telegram' } as const;

function describe(scope: ContactScope): string {
  return scope.channel === 'whatsapp'
    ? `WhatsApp +${scope.address}`
    : `Telegram chat ${scope.address}`;
}

/**
 * Keeps contacts apart (issue 24.4): in a contact's auto-reply turn, a tool acts only
 * in that contact's own chat. Why a call is refused, or null when it may go on.
 */
export function contactScopeProblem(
  tool: AiTool,
  args: unknown,
  turn: ToolTurn,
): string | null {
  const own = turn.contact;
  if (!own) return null;
  const declared = tool.contactTargets?.(args as never);
  if (declared === undefined) {
    return CHANNEL_TOOL.test(tool.name)
      ? `${tool.name} cannot be used in a contact's turn`
      : null;
  }
  const refusal = `In this conversation you act only in ${describe(own)}'s own ${CHANNEL_WORDS[own.channel]} chat: ${tool.name} may not reach another contact`;
  if (declared === 'all') return refusal;
  const other = declared.find(
    (t) => t.channel !== own.channel || t.address !== own.address,
  );
  return other ? `${refusal} (${describe(other)})` : null;
}
