import { Injectable } from '@nestjs/common';
import { MEMORY_MAX_LENGTH } from '@metatronos/shared-types';
import { z } from 'zod';
import { SystemInstructionService } from '../../system-instruction/system-instruction.service';
import {
  AiToolProvider,
  DEFAULT_MODE,
  toolError,
  type AiTool,
} from '../ai-tool';

// No maxLength: an over-long memory gets the seed's own refusal below, which tells the model what to do.
const SAVE_MEMORY_ARGS = z.object({
  memory: z.string().describe('The complete new memory text'),
});

@AiToolProvider()
@Injectable()
export class SaveMemoryTool implements AiTool<typeof SAVE_MEMORY_ARGS> {
  readonly name = 'save_memory';
  readonly modes = [DEFAULT_MODE];
  readonly description =
    `Replace your whole memory with new text (at most ${MEMORY_MAX_LENGTH} characters). ` +
    'Your memory is shown to you at the start of every conversation under "Your Memory". ' +
    'Merge new facts into the current memory (keep what is still true), as short bullet points.';
  readonly schema = SAVE_MEMORY_ARGS;
  readonly promptLine = 'rewrite your memory when you learn something lasting.';

  effect(): 'memory' {
    return 'memory';
  }

  summarize({ memory }: z.output<typeof SAVE_MEMORY_ARGS>): string {
    return `Replace Metatron's memory with: “${memory}”`;
  }

  constructor(private readonly instruction: SystemInstructionService) {}

  async execute({
    memory,
  }: z.output<typeof SAVE_MEMORY_ARGS>): Promise<string> {
    if (memory.length > MEMORY_MAX_LENGTH) {
      return toolError(
        `Memory is ${memory.length} characters; the limit is ${MEMORY_MAX_LENGTH}. Nothing was saved: shorten it and try again.`,
      );
    }
    await this.instruction.updateMemory(memory, 'ai');
    return JSON.stringify({
      success: true,
      message: 'Memory updated successfully',
    });
  }
}
