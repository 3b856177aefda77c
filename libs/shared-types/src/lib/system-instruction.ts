import type { TaintMark } from './actions';

/** The memory blob the AI keeps with `save_memory` is capped at this many characters. */
export const MEMORY_MAX_LENGTH = 4000;

/** `GET /api/system-instruction`: stored in `settings` under `_id: "system_instruction"`. */
export interface SystemInstruction {
  /** Written by the owner, sent verbatim. Blank means no system prompt at all. */
  coreInstruction: string;
  /** Kept by the AI (`save_memory`), at most MEMORY_MAX_LENGTH characters. */
  memory: string;
  /** When false, no tools are offered to the model. */
  memoryEnabled: boolean;
  /** The AI's Markdown documentation of its collections (`update_db_schema`). */
  dbSchema: string;
  /** ISO 8601, stamped on every write. */
  updatedAt: string;
}

/** `PATCH /api/system-instruction` */
export type UpdateSystemInstructionRequest = Partial<
  Omit<SystemInstruction, 'updatedAt'>
>;

/** `GET /api/system-instruction/prompt`: exactly what the next chat turn would send. */
export interface CombinedPromptResponse {
  prompt: string | null;
}

/** `GET /api/chats/:id/prompt`: the system prompt of that chat's next request, with the mark its last turn ended with. */
export interface ChatPromptPreview extends CombinedPromptResponse {
  chatId: string;
  mode: string;
  /** What third-party content marked the chat's newest reply (empty: none); the prompt names it too. */
  taint: TaintMark[];
}

/** `GET /api/system-instruction/default`: the core instruction a fresh install starts with, for "Reset to default". */
export interface DefaultInstructionResponse {
  coreInstruction: string;
}
