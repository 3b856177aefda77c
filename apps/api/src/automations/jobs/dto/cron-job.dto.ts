import { applyDecorators } from '@nestjs/common';
import {
  ApiProperty,
  ApiPropertyOptional,
  type ApiPropertyOptions,
} from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsMongoId,
  IsNotEmpty,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  AUTOMATION_KINDS,
  RUN_OUTCOMES,
  RUN_TRIGGERS,
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  DEFAULT_JOB_MAX_ROUNDS,
  DEFAULT_JOB_MAX_TOKENS_PER_RUN,
  JOB_MAX_ROUNDS_MAX,
  JOB_MAX_ROUNDS_MIN,
  JOB_MAX_TOKENS_PER_RUN_MAX,
  JOB_MAX_TOKENS_PER_RUN_MIN,
  MAIL_TRIGGER_DEFAULT_FOLDER,
  MAIL_TRIGGER_FOLDER_MAX_LENGTH,
  MAIL_WATCH_STATES,
  type AutomationKind,
  type MailTriggerInput,
  type MailTriggerView,
  type MailWatchState,
  type MailWatchView,
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

const ROUNDS_MESSAGE = `maxRounds must be a whole number from ${JOB_MAX_ROUNDS_MIN} to ${JOB_MAX_ROUNDS_MAX}`;
const TOKENS_MESSAGE = `maxTokensPerRun must be a whole number from ${JOB_MAX_TOKENS_PER_RUN_MIN.toLocaleString('en-US')} to ${JOB_MAX_TOKENS_PER_RUN_MAX.toLocaleString('en-US')}`;

/** "200,000", "200 000" and "20" as people write them; anything else is left for the checks to refuse. */
function numeric(value: unknown): unknown {
  return typeof value === 'string' &&
    /^\s*\d{1,3}(?:[,_ ]?\d{3})*\s*$/.test(value)
    ? Number(value.replace(/[,_ ]/g, ''))
    : value;
}

const EXPRESSION_HELP =
  "Five fields (minute hour day-of-month month day-of-week) read in the owner's timezone, e.g. `0 8 * * 1-5`; a sixth leading seconds field is allowed if it fires at most once a minute.";

const TRIGGER_HELP =
  'A job has exactly one trigger: `cronExpression` (a schedule) or `mailTrigger` (new mail in a folder of an email account).';

export class MailTriggerDto implements MailTriggerInput {
  @ApiProperty({
    description: 'An email account (GET /api/accounts)',
    example: '665f0c2a9b1e4a3d2c1b0a99',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  accountId!: string;

  @ApiPropertyOptional({
    default: MAIL_TRIGGER_DEFAULT_FOLDER,
    maxLength: MAIL_TRIGGER_FOLDER_MAX_LENGTH,
  })
  @OptionalField()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAIL_TRIGGER_FOLDER_MAX_LENGTH)
  folder?: string;
}

/*
 * The fields a job is created with and changed by, checked and documented alike in both
 * requests (one decorator each: the create and update bodies keep their own property order
 * and `OptionalField`'s refusal of null, which `PartialType`'s `IsOptional` would drop).
 */

function CronExpressionField(
  doc: Pick<ApiPropertyOptions, 'description' | 'example'>,
): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      maxLength: CRON_EXPRESSION_MAX_LENGTH,
      ...doc,
    }),
    OptionalField(),
    IsString(),
    MaxLength(CRON_EXPRESSION_MAX_LENGTH),
  );
}

function MailTriggerField(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: MailTriggerDto, description }),
    OptionalField(),
    IsObject(),
    ValidateNested(),
    Type(() => MailTriggerDto),
  );
}

function ActOnOwnToolsField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: [String],
      // Stated here: the Swagger plugin reads the checks below only when they decorate the property itself.
      maxItems: 50,
      items: { type: 'string', maxLength: 64 },
      example: ['whatsapp_send_message'],
      description:
        'Tools this job may use on its own (send, delete, move) instead of leaving a pending action for the owner; replaces the list. Registered tool names; permission tools are never allowed. One name or a list.',
    }),
    OptionalField(),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? [value] : value,
    ),
    IsArray(),
    ArrayMaxSize(50),
    IsString({ each: true }),
    MaxLength(64, { each: true }),
  );
}

function MaxRoundsField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      minimum: JOB_MAX_ROUNDS_MIN,
      maximum: JOB_MAX_ROUNDS_MAX,
      default: DEFAULT_JOB_MAX_ROUNDS,
      description:
        'Tool rounds one run may use; a run that needs more stops with reason `max-rounds`. A number or a numeric string.',
    }),
    OptionalField(),
    Transform(({ value }: { value: unknown }) => numeric(value)),
    IsInt({ message: ROUNDS_MESSAGE }),
    Min(JOB_MAX_ROUNDS_MIN, { message: ROUNDS_MESSAGE }),
    Max(JOB_MAX_ROUNDS_MAX, { message: ROUNDS_MESSAGE }),
  );
}

function MaxTokensPerRunField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      minimum: JOB_MAX_TOKENS_PER_RUN_MIN,
      maximum: JOB_MAX_TOKENS_PER_RUN_MAX,
      default: DEFAULT_JOB_MAX_TOKENS_PER_RUN,
      description:
        'Tokens (input + output over all its model calls) one run may use; the call that would pass it is not sent and the run stops with reason `max-tokens`. A number or a numeric string ("200,000").',
    }),
    OptionalField(),
    Transform(({ value }: { value: unknown }) => numeric(value)),
    IsInt({ message: TOKENS_MESSAGE }),
    Min(JOB_MAX_TOKENS_PER_RUN_MIN, { message: TOKENS_MESSAGE }),
    Max(JOB_MAX_TOKENS_PER_RUN_MAX, { message: TOKENS_MESSAGE }),
  );
}

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

  @CronExpressionField({
    example: '0 8 * * 1-5',
    description: `${EXPRESSION_HELP} ${TRIGGER_HELP}`,
  })
  cronExpression?: string;

  @MailTriggerField(`Run once per new message in this folder. ${TRIGGER_HELP}`)
  mailTrigger?: MailTriggerDto;

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

  @ActOnOwnToolsField()
  actOnOwnTools?: string[];

  @MaxRoundsField()
  maxRounds?: number;

  @MaxTokensPerRunField()
  maxTokensPerRun?: number;
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

  @CronExpressionField({
    description: `${EXPRESSION_HELP} Giving it switches a mail-triggered job to this schedule.`,
  })
  cronExpression?: string;

  @MailTriggerField(
    'Giving it switches the job to run on new mail (its schedule is dropped). A job has exactly one trigger.',
  )
  mailTrigger?: MailTriggerDto;

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

  @ActOnOwnToolsField()
  actOnOwnTools?: string[];

  @MaxRoundsField()
  maxRounds?: number;

  @MaxTokensPerRunField()
  maxTokensPerRun?: number;
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

export class MailTriggerViewDto implements MailTriggerView {
  @ApiProperty()
  accountId!: string;
  @ApiProperty({ example: MAIL_TRIGGER_DEFAULT_FOLDER })
  folder!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The account's address; null when the account was removed",
  })
  address!: string | null;
}

export class MailWatchDto implements MailWatchView {
  @ApiProperty({ enum: MAIL_WATCH_STATES })
  state!: MailWatchState;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why the watch is not working (wrong password, server unreachable, account removed), in plain words',
  })
  reason!: string | null;
}

export class CronJobDto implements CronJobView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty()
  instruction!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The schedule; null for a mail-triggered job',
  })
  cronExpression!: string | null;
  @ApiProperty({
    type: MailTriggerViewDto,
    nullable: true,
    description: 'Runs once per new message here; null for a scheduled job',
  })
  mailTrigger!: MailTriggerView | null;
  @ApiProperty({
    type: MailWatchDto,
    nullable: true,
    description:
      'How the IMAP watch of a mail-triggered job is doing; null for scheduled or paused jobs',
  })
  mailWatch!: MailWatchView | null;
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({
    example: 'default',
    description: 'The mode each run starts in',
  })
  mode!: string;
  @ApiProperty({
    type: [String],
    example: [],
    description:
      'Tools this job may use on its own (send, delete, move) without a pending action',
  })
  actOnOwnTools!: string[];
  @ApiProperty({
    example: DEFAULT_JOB_MAX_ROUNDS,
    description: 'Tool rounds one run may use',
  })
  maxRounds!: number;
  @ApiProperty({
    example: DEFAULT_JOB_MAX_TOKENS_PER_RUN,
    description: 'Tokens (all model calls) one run may use',
  })
  maxTokensPerRun!: number;
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
