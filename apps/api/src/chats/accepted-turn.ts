import type { TurnSource } from '../llm/turn-source';

/**
 * An in-process event (never sent to the console) emitted when a turn's message is accepted,
 * before its history is read and its prompt built: work the prompt will need (the memory's
 * recall and its embedding call) starts now, beside the rest, instead of after it.
 */
export const TURN_ACCEPTED = 'chats.turn-accepted';

export interface AcceptedTurn {
  chatId: string;
  source: TurnSource;
  /** The message the turn answers, as the prompt will be given it. */
  content: string;
  /** False when the caller offers no tools (nothing is recalled then). */
  toolsAllowed: boolean;
}
