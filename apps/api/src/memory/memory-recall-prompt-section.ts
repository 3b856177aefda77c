import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { TURN_ACCEPTED, type AcceptedTurn } from '../chats/accepted-turn';
import { audienceOf } from '../system-instruction/prompt-audience';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../system-instruction/prompt-section';
import { SystemInstructionService } from '../system-instruction/system-instruction.service';
import { MemoryService } from './memory.service';

/**
 * "## Recalled Notes": the few active notes most relevant to the owner's message
 * (at most RECALL_MAX_TOKENS), before each owner turn. Notes only, never a
 * message's raw text, and never for a contact or an unattended run.
 */
@PromptSectionProvider()
@Injectable()
export class MemoryRecallPromptSection implements PromptSection {
  private readonly logger = new Logger(MemoryRecallPromptSection.name);
  readonly id = 'memory-recall';
  // It changes with every message: after the stable blocks, so they stay a cacheable prefix.
  readonly order = 950;
  readonly audiences = ['owner'] as const;

  constructor(
    private readonly memory: MemoryService,
    private readonly instruction: SystemInstructionService,
  ) {}

  /**
   * The recall of a turn this section will render starts when its message is accepted, while
   * the turn reads its history: its embedding call (if any) is then under way before the prompt
   * is built, and the prompt waits for what is left of it at most. Same conditions as `render`.
   */
  @OnEvent(TURN_ACCEPTED)
  onTurnAccepted(turn: AcceptedTurn): void {
    if (!turn.toolsAllowed || !turn.content.trim()) return;
    if (!this.audiences.includes(audienceOf(turn.source) as 'owner')) return;
    void this.instruction.getSystemInstruction().then(
      (instruction) => {
        if (instruction.memoryEnabled) this.memory.prepareRecall(turn.content);
      },
      (error: Error) =>
        this.logger.warn(`Memory recall not begun early: ${error.message}`),
    );
  }

  async render({
    userMessage,
    toolsEnabled,
  }: PromptContext): Promise<string | null> {
    if (!toolsEnabled || !userMessage?.trim()) return null;
    const notes = await this.memory
      .recall(userMessage)
      .catch((error: Error) => {
        this.logger.warn(`Memory recall failed: ${error.message}`);
        return [];
      });
    if (!notes.length) return null;
    const lines = notes.map(
      (n) => `- ${n.text} (note ${n.id}, ${n.observedAt.slice(0, 10)})`,
    );
    return [
      '## Recalled Notes',
      'Notes from your memory that may bear on this message (memory_search finds more):',
      ...lines,
    ].join('\n');
  }
}
