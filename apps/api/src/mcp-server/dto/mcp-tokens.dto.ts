import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import {
  MCP_TOKEN_NAME_MAX_LENGTH,
  type CreateMcpTokenRequest,
  type McpTokenCreated,
  type McpTokenList,
  type McpTokenView,
  type McpToolChoice,
} from '@metatronos/shared-types';
import { OptionalField, OptionalOrNull } from '../../http/optional-field';

export class CreateMcpTokenDto implements CreateMcpTokenRequest {
  @ApiProperty({
    description: 'What the owner calls the agent that will hold the token',
    maxLength: MCP_TOKEN_NAME_MAX_LENGTH,
    example: 'Desktop assistant',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MCP_TOKEN_NAME_MAX_LENGTH)
  name!: string;

  @ApiPropertyOptional({
    description:
      'The tools the agent may call: one name or a list, from the exposable ones (see GET choices); omitted: the read-only defaults',
    type: [String],
    example: ['memory_search', 'read_file'],
  })
  @OptionalField()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? [value] : value,
  )
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  tools?: string[];

  @ApiPropertyOptional({
    description:
      'Days until the token stops working: a number or a numeric string (fractions allowed), 1 to 3650; null or omitted (and no expiresAt): never',
    oneOf: [{ type: 'number' }, { type: 'string' }],
    nullable: true,
    example: 30,
  })
  // Checked by the service (a number or a numeric string, in range), with its own words.
  @Allow()
  expiresInDays?: number | string | null;

  @ApiPropertyOptional({
    description:
      'When the token stops working (ISO date, in the future); instead of expiresInDays',
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-01-31T00:00:00Z',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(40)
  expiresAt?: string | null;
}

export class McpTokenCreatedDto implements McpTokenCreated {
  @ApiProperty() id!: string;
  @ApiProperty({
    description:
      'The bearer token for /mcp: shown this once, only its hash is stored',
  })
  token!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: [String] }) tools!: string[];
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When it stops working; null: never',
  })
  expiresAt!: string | null;
}

export class McpToolChoiceDto implements McpToolChoice {
  @ApiProperty() name!: string;
  @ApiProperty() label!: string;
  @ApiProperty() byDefault!: boolean;
}

export class McpTokenViewDto implements McpTokenView {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: [String] }) tools!: string[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When it stops working (401 like a revoked one); null: never',
  })
  expiresAt!: string | null;
  @ApiProperty({ description: 'It has expired' })
  expired!: boolean;
  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  lastUsedAt!: string | null;
  @ApiProperty({ description: 'Tool calls made with the token' })
  calls!: number;
  @ApiProperty({ description: 'Calls refused or answered with an error' })
  errors!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    description: 'Tool calls per tool',
  })
  callsByTool!: Record<string, number>;
}

export class McpTokenListDto implements McpTokenList {
  @ApiProperty({ type: [McpTokenViewDto] }) tokens!: McpTokenViewDto[];
  @ApiProperty({ type: [McpToolChoiceDto] }) choices!: McpToolChoiceDto[];
}
