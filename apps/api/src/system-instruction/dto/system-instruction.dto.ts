import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, MaxLength } from 'class-validator';
import {
  MEMORY_MAX_LENGTH,
  type CombinedPromptResponse,
  type DefaultInstructionResponse,
  type SystemInstruction,
  type UpdateSystemInstructionRequest,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';

/** Long enough for any real instruction, short enough that a paste accident cannot fill the prompt. */
export const CORE_INSTRUCTION_MAX_LENGTH = 50_000;
export const DB_SCHEMA_MAX_LENGTH = 50_000;

export class SystemInstructionDto implements SystemInstruction {
  @ApiProperty({
    description:
      'Written by the owner, sent verbatim; blank means no system prompt',
  })
  coreInstruction!: string;
  @ApiProperty({
    maxLength: MEMORY_MAX_LENGTH,
    description: 'Kept by the AI with save_memory',
  })
  memory!: string;
  @ApiProperty({ description: 'When false, no tools are offered to the model' })
  memoryEnabled!: boolean;
  @ApiProperty({
    description: "The AI's Markdown documentation of its collections",
  })
  dbSchema!: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updatedAt!: string;
}

export class UpdateSystemInstructionDto
  implements UpdateSystemInstructionRequest
{
  @ApiPropertyOptional({ maxLength: CORE_INSTRUCTION_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(CORE_INSTRUCTION_MAX_LENGTH)
  coreInstruction?: string;

  @ApiPropertyOptional({ maxLength: MEMORY_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(MEMORY_MAX_LENGTH, {
    message: `memory must be at most ${MEMORY_MAX_LENGTH} characters`,
  })
  memory?: string;

  @ApiPropertyOptional()
  @OptionalField()
  @IsBoolean()
  memoryEnabled?: boolean;

  @ApiPropertyOptional({ maxLength: DB_SCHEMA_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(DB_SCHEMA_MAX_LENGTH)
  dbSchema?: string;
}

export class CombinedPromptDto implements CombinedPromptResponse {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Exactly what the next chat turn sends as system instruction',
  })
  prompt!: string | null;
}

export class DefaultInstructionDto implements DefaultInstructionResponse {
  @ApiProperty({
    description:
      "The core instruction a fresh install starts with; the owner's own is untouched",
  })
  coreInstruction!: string;
}
