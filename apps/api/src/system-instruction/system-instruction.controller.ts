import { Body, Controller, Get, Patch } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  CombinedPromptResponse,
  DefaultInstructionResponse,
  SystemInstruction,
} from '@metatronos/shared-types';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { CombinedPromptBuilder } from './combined-prompt.builder';
import { DEFAULT_CORE_INSTRUCTION } from './default-instruction';
import {
  CombinedPromptDto,
  DefaultInstructionDto,
  SystemInstructionDto,
  UpdateSystemInstructionDto,
} from './dto/system-instruction.dto';
import { SystemInstructionService } from './system-instruction.service';

@ApiTags('system-instruction')
@Controller('system-instruction')
export class SystemInstructionController {
  constructor(
    private readonly instruction: SystemInstructionService,
    private readonly prompt: CombinedPromptBuilder,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'Core instruction, memory, database documentation and the memory toggle',
  })
  @ApiOkResponse({ type: SystemInstructionDto })
  get(): Promise<SystemInstruction> {
    return this.instruction.getSystemInstruction();
  }

  @Get('default')
  @ApiOperation({
    summary:
      'The default core instruction, so the console can preview a reset; nothing is written',
  })
  @ApiOkResponse({ type: DefaultInstructionDto })
  defaultInstruction(): DefaultInstructionResponse {
    return { coreInstruction: DEFAULT_CORE_INSTRUCTION };
  }

  @Patch()
  @ApiOperation({ summary: 'Change some fields; the others stay' })
  @ApiOkResponse({ type: SystemInstructionDto })
  @ApiBadRequestResponse({
    description:
      'Memory over 4,000 characters or a wrong type; nothing is written',
  })
  update(@Body() body: UpdateSystemInstructionDto): Promise<SystemInstruction> {
    return this.instruction.updateSystemInstruction(body, 'owner');
  }

  @Get('prompt')
  @ApiOperation({
    summary:
      "The combined system prompt a new chat's first turn would send (the default mode)",
  })
  @ApiOkResponse({ type: CombinedPromptDto })
  async combinedPrompt(): Promise<CombinedPromptResponse> {
    return {
      prompt: await this.prompt.buildCombinedPrompt({
        source: 'chat',
        mode: DEFAULT_MODE,
      }),
    };
  }
}
