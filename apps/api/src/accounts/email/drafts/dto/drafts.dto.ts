import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEmail,
  IsIn,
  IsString,
  MaxLength,
} from 'class-validator';
import {
  EMAIL_DRAFT_ACTIONS,
  type EmailDraftAction,
  type EmailDraftRepliesTo,
  type EmailDraftStatus,
  type EmailDraftView,
  type UpdateEmailDraftRequest,
} from '@metatronos/shared-types';
import { OptionalField } from '../../../../http/optional-field';

export const EMAIL_DRAFT_STATUSES: readonly EmailDraftStatus[] = [
  'pending',
  'sent',
  'failed',
];

/** Recipients per header a draft may hold; subject and body limits. */
export const MAX_DRAFT_RECIPIENTS = 50;
export const MAX_DRAFT_SUBJECT = 998;
export const MAX_DRAFT_TEXT = 100_000;

export class EmailDraftRepliesToDto implements EmailDraftRepliesTo {
  @ApiProperty({ description: 'Subject of the mail answered' })
  subject!: string;
  @ApiProperty({ description: 'Its sender, as in its From header' })
  from!: string;
}

export class EmailDraftDto implements EmailDraftView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  accountId!: string;
  @ApiProperty({ description: "The sending account's address" })
  accountAddress!: string;
  @ApiProperty({ enum: EMAIL_DRAFT_ACTIONS })
  action!: EmailDraftAction;
  @ApiProperty({ type: [String] })
  to!: string[];
  @ApiProperty({ type: [String] })
  cc!: string[];
  @ApiProperty()
  subject!: string;
  @ApiProperty()
  text!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'For replies: the Message-ID replied to',
  })
  inReplyTo!: string | null;
  @ApiProperty({ example: 'cron', description: 'cron, pulse or auto-reply' })
  source!: string;
  @ApiProperty({ type: String, nullable: true })
  chatId!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'For cron: the job whose run wrote it',
  })
  jobId!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "For cron: the job's name when it wrote the draft",
  })
  jobName!: string | null;
  @ApiProperty({
    type: EmailDraftRepliesToDto,
    nullable: true,
    description: 'For replies: the subject and sender of the mail answered',
  })
  repliesTo!: EmailDraftRepliesTo | null;
  @ApiProperty({ enum: EMAIL_DRAFT_STATUSES })
  status!: EmailDraftStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the last send failed',
  })
  error!: string | null;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty({ type: String, nullable: true })
  sentAt!: string | null;
}

export class DraftsQueryDto {
  @ApiPropertyOptional({ enum: EMAIL_DRAFT_STATUSES })
  @OptionalField()
  @IsIn(EMAIL_DRAFT_STATUSES)
  status?: EmailDraftStatus;
}

export class UpdateEmailDraftDto implements UpdateEmailDraftRequest {
  @ApiPropertyOptional({
    type: [String],
    example: ['ann@example.com'],
    maxItems: MAX_DRAFT_RECIPIENTS,
  })
  @OptionalField()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_DRAFT_RECIPIENTS)
  @IsEmail({}, { each: true, message: 'to must hold email addresses only' })
  to?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: MAX_DRAFT_RECIPIENTS })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(MAX_DRAFT_RECIPIENTS)
  @IsEmail({}, { each: true, message: 'cc must hold email addresses only' })
  cc?: string[];

  @ApiPropertyOptional({ maxLength: MAX_DRAFT_SUBJECT })
  @OptionalField()
  @IsString()
  @MaxLength(MAX_DRAFT_SUBJECT)
  subject?: string;

  @ApiPropertyOptional({ maxLength: MAX_DRAFT_TEXT })
  @OptionalField()
  @IsString()
  @MaxLength(MAX_DRAFT_TEXT)
  text?: string;
}
