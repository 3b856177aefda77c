import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsMongoId,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  AUTOMATION_KINDS,
  RUN_OUTCOMES,
  RUN_TRIGGERS,
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  type AutomationKind,
  type CreateCronJobRequest,
  type CronJobCreator,
  type CronJobView,
  type CronPreview,
  type CronPreviewQuery,
  type CronRunView,
  type RunOutcome,
  type RunTrigger,
  type RunsQuery,
  type TokenUsage,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import { TokenUsageDto } from '../../../chats/dto/chat.dto';
import { OptionalField } from '../../../http/optional-field';

const EXPRESSION_HELP =
  "Five fields (minute hour day-of-month month day-of-week) read in the owner's timezone, e.g. `0 8 * * 1-5`; a sixth leading seconds field is allowed if it fires at most once a minute.";

export class CreateCronJobDto implements CreateCronJobRequest {
  @ApiProperty({
    maxLength: CRONJOB_NAME_MAX_LENGTH,
    example: 'Morning summary',
  })
  @IsString()
  @MaxLength(CRONJOB_NAME_MAX_LENGTH)
  name!: string;

  @ApiProperty({
    maxLength: CRONJOB_INSTRUCTION_MAX_LENGTH,
    example: "Summarise today's schedule.",
  })
  @IsString()
  @MaxLength(CRONJOB_INSTRUCTION_MAX_LENGTH)
  instruction!: string;

  @ApiProperty({
    maxLength: CRON_EXPRESSION_MAX_LENGTH,
    example: '0 8 * * 1-5',
    description: EXPRESSION_HELP,
  })
  @IsString()
  @MaxLength(CRON_EXPRESSION_MAX_LENGTH)
  cronExpression!: string;

  @ApiPropertyOptional({ default: true })
  @OptionalField()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    default: 'default',
    example: 'data',
    description:
      'The mode each run starts in (one of the modes of GET /api/tools)',
  })
  @OptionalField()
  @IsString()
  @MaxLength(32)
  mode?: string;
}

export class UpdateCronJobDto implements UpdateCronJobRequest {
  @ApiPropertyOptional({ maxLength: CRONJOB_NAME_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(CRONJOB_NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({ maxLength: CRONJOB_INSTRUCTION_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(CRONJOB_INSTRUCTION_MAX_LENGTH)
  instruction?: string;

  @ApiPropertyOptional({
    maxLength: CRON_EXPRESSION_MAX_LENGTH,
    description: EXPRESSION_HELP,
  })
  @OptionalField()
  @IsString()
  @MaxLength(CRON_EXPRESSION_MAX_LENGTH)
  cronExpression?: string;

  @ApiPropertyOptional({
    description:
      'false pauses the job, true resumes it (from now: missed times are not caught up)',
  })
  @OptionalField()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    example: 'data',
    description: 'The mode each run starts in',
  })
  @OptionalField()
  @IsString()
  @MaxLength(32)
  mode?: string;
}

export class CronPreviewQueryDto implements CronPreviewQuery {
  @ApiProperty({
    maxLength: CRON_EXPRESSION_MAX_LENGTH,
    example: '0 8 * * 1-5',
  })
  @IsString()
  @MaxLength(CRON_EXPRESSION_MAX_LENGTH)
  cronExpression!: string;
}

export class RunsQueryDto implements RunsQuery {
  @ApiPropertyOptional({ default: 20, minimum: 1, maximum: 100 })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({
    description: 'A run id: the runs started before it (older page)',
  })
  @OptionalField()
  @IsMongoId({ message: 'before must be a run id' })
  before?: string;
}

export class CronRunDto implements CronRunView {
  @ApiProperty()
  id!: string;
  @ApiProperty({ enum: AUTOMATION_KINDS })
  kind!: AutomationKind;
  @ApiProperty({ type: String, nullable: true })
  jobId!: string | null;
  @ApiProperty({ enum: RUN_TRIGGERS })
  trigger!: RunTrigger;
  @ApiProperty({ enum: RUN_OUTCOMES })
  outcome!: RunOutcome;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'When the schedule said to run (null for a manual run)',
  })
  dueAt!: string | null;
  @ApiProperty()
  startedAt!: string;
  @ApiProperty({ type: String, nullable: true })
  finishedAt!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  durationMs!: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      '`busy` for a skipped run; how many times were missed for `missed`',
  })
  reason!: string | null;
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The chat the run's turn is in",
  })
  chatId!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The assistant message of the run',
  })
  messageId!: string | null;
  @ApiProperty({ type: TokenUsageDto, nullable: true })
  usage!: TokenUsage | null;
}

export class CronJobDto implements CronJobView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty()
  instruction!: string;
  @ApiProperty()
  cronExpression!: string;
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({
    example: 'default',
    description: 'The mode each run starts in',
  })
  mode!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The job's own chat",
  })
  chatId!: string | null;
  @ApiProperty({ example: 'At 08:00, Monday through Friday' })
  description!: string;
  @ApiProperty({
    type: [String],
    description: 'Next run times (ISO); empty while paused',
  })
  nextRuns!: string[];
  @ApiProperty({ example: 'Europe/Berlin' })
  timezone!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why the job cannot be scheduled: an invalid expression, or a document stored in a shape the scheduler cannot run',
  })
  scheduleError!: string | null;
  @ApiProperty({
    enum: ['owner', 'ai'],
    nullable: true,
    description:
      'Who made the job (null for jobs stored before this was recorded)',
  })
  createdBy!: CronJobCreator | null;
  @ApiProperty({ type: CronRunDto, nullable: true })
  lastRun!: CronRunView | null;
  @ApiProperty()
  consecutiveFailures!: number;
  @ApiProperty({
    description: 'consecutiveFailures reached CRON_FAILURE_ALERT_AFTER',
  })
  failing!: boolean;
  @ApiProperty()
  running!: boolean;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class CronPreviewDto implements CronPreview {
  @ApiProperty()
  valid!: boolean;
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
  @ApiProperty({ type: [String] })
  nextRuns!: string[];
  @ApiProperty()
  timezone!: string;
}
