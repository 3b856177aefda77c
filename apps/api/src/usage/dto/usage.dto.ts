import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import {
  USAGE_DEFAULT_RANGE_DAYS,
  USAGE_MAX_RANGE_DAYS,
  USAGE_SOURCES,
  type ModelProvider,
  type UsageBySource,
  type UsageDay,
  type UsageModel,
  type UsageQuery,
  type UsageReport,
  type UsageSource,
} from '@metatronos/shared-types';

export class UsageQueryDto implements UsageQuery {
  @ApiPropertyOptional({
    description: `First day, YYYY-MM-DD in the owner's zone (default: ${USAGE_DEFAULT_RANGE_DAYS - 1} days before \`to\`). At most ${USAGE_MAX_RANGE_DAYS} days from \`from\` to \`to\`.`,
    example: '2026-01-01',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  from?: string;

  @ApiPropertyOptional({
    description: "Last day, YYYY-MM-DD in the owner's zone (default: today)",
    example: '2026-01-31',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  to?: string;
}

class UsageTotalsDto {
  @ApiProperty()
  inputTokens!: number;
  @ApiProperty()
  outputTokens!: number;
  @ApiProperty({
    description:
      'Replies (LLM turns with all their tool rounds) with reported usage',
  })
  turns!: number;
  @ApiProperty({
    description:
      "USD from the reported tokens at each model's price (cached input at its own price where reported)",
    example: 0.0123,
  })
  costUsd!: number;
}

class UsageDayDto extends UsageTotalsDto implements UsageDay {
  @ApiProperty({ example: '2026-01-31' })
  day!: string;
}

class UsageModelDto extends UsageTotalsDto implements UsageModel {
  @ApiProperty({ example: 'gpt-4.1-mini' })
  model!: string;
  @ApiProperty({ enum: ['gemini', 'openai', 'openai-compatible'] })
  provider!: ModelProvider;
}

class UsageBySourceDto extends UsageTotalsDto implements UsageBySource {
  @ApiProperty({ enum: USAGE_SOURCES })
  source!: UsageSource;
}

export class UsageReportDto implements UsageReport {
  @ApiProperty({ example: '2026-01-01' })
  from!: string;
  @ApiProperty({ example: '2026-01-31' })
  to!: string;
  @ApiProperty({ description: "The owner's zone the days are counted in" })
  timezone!: string;
  @ApiProperty({ type: UsageTotalsDto })
  totals!: UsageTotalsDto;
  @ApiProperty({
    type: [UsageDayDto],
    description: 'Every day of the range, oldest first',
  })
  byDay!: UsageDayDto[];
  @ApiProperty({ type: [UsageModelDto], description: 'Most tokens first' })
  byModel!: UsageModelDto[];
  @ApiProperty({ type: [UsageBySourceDto], description: 'Most tokens first' })
  bySource!: UsageBySourceDto[];
}
