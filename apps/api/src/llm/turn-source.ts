/**
 * Who started an LLM turn: the owner's chat, a voice call, a cron job, a Pulse, or an auto-reply
 * to a contact; `mcp` is a tool call from another agent through `/mcp` (never the owner);
 * `memory` is the memory's own upkeep (embeddings, the nightly consolidation), unattended.
 */
export type TurnSource =
  | 'chat'
  | 'voice'
  | 'cron'
  | 'pulse'
  | 'auto-reply'
  | 'mcp'
  | 'memory';

/** Turns the owner takes part in as they run (typed or spoken): tools act as in the owner's chat. */
export function isAttended(source: TurnSource): boolean {
  return source === 'chat' || source === 'voice';
}
