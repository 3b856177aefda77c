import { Injectable } from '@nestjs/common';
import { MEMORY_MAX_LENGTH } from '@metatronos/shared-types';
import { SystemInstructionService } from '../../system-instruction/system-instruction.service';
import { AiToolProvider, toolError, type AiTool } from '../ai-tool';

@AiToolProvider()
@Injectable()
export class SaveMemoryTool implements AiTool {
  readonly definition = {
    name: 'save_memory',
    description:
      `Replace your whole memory with new text (at most ${MEMORY_MAX_LENGTH} characters). ` +
      'Your memory is shown to you at the start of every conversation under "Your Memory". ' +
      'Merge new facts into the current memory (keep what is still true), as short bullet points.',
    parameters: {
      type: 'object' as const,
      properties: {
        memory: { type: 'string', description: 'The complete new memory text' },
      },
      required: ['memory'],
    },
  };
  readonly promptLine = `replace your memory (the whole text, max ${MEMORY_MAX_LENGTH} characters) when you learn something lasting.`;

  constructor(private readonly instruction: SystemInstructionService) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    const memory = args['memory'] as string;
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
