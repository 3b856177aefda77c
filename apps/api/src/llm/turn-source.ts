/** Who started an LLM turn: the owner's chat, a cron job, a Pulse, or an auto-reply to a contact. */
export type TurnSource = 'chat' | 'cron' | 'pulse' | 'auto-reply';
