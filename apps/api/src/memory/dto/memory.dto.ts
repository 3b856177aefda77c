import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDateString,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import {
  MEMORY_NOTE_MAX_LENGTH,
  MEMORY_QUERY_MAX_LENGTH,
  MEMORY_SEARCH_DEFAULT_LIMIT,
  MEMORY_SEARCH_MAX_LIMIT,
  MEMORY_SOURCES,
  type MemoryChangeSource,
  type MemoryListResponse,
  type MemoryNoteView,
  type MemoryRunChange,
  type MemoryRunModelOutcome,
  type MemoryRunView,
  type MemorySearchResult,
  type MemoryVersion,
  type UpdateMemoryRequest,
} from '@metatronos/shared-types';
import { OptionalField, OptionalOrNull } from '../../http/optional-field';

export class MemoryListQueryDto {
  @ApiPropertyOptional({
    maxLength: MEMORY_QUERY_MAX_LENGTH,
    description:
      'Search words: notes and messages of every chat the owner may see, best first',
  })
  @OptionalField()
  @IsString()
  @MinLength(1, { message: 'q must not be empty' })
  @MaxLength(MEMORY_QUERY_MAX_LENGTH, {
    message: `q must be at most ${MEMORY_QUERY_MAX_LENGTH} characters`,
  })
  q?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MEMORY_SEARCH_MAX_LIMIT,
    default: MEMORY_SEARCH_DEFAULT_LIMIT,
  })
  @OptionalField()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1, { message: `limit must be from 1 to ${MEMORY_SEARCH_MAX_LIMIT}` })
  @Max(MEMORY_SEARCH_MAX_LIMIT, {
    message: `limit must be from 1 to ${MEMORY_SEARCH_MAX_LIMIT}`,
  })
  limit?: number;
}

export class UpdateMemoryDto implements UpdateMemoryRequest {
  @ApiPropertyOptional({
    maxLength: MEMORY_NOTE_MAX_LENGTH,
    description: 'New text; the prior version is kept in the history',
  })
  @OptionalField()
  @IsString()
  @MinLength(1, { message: 'text must not be empty' })
  @MaxLength(MEMORY_NOTE_MAX_LENGTH, {
    message: `text must be at most ${MEMORY_NOTE_MAX_LENGTH} characters`,
  })
  text?: string;

  @ApiPropertyOptional({
    description: 'true: approve a proposed note (it becomes memory)',
  })
  @OptionalField()
  @IsBoolean({ message: 'approve must be true or false' })
  approve?: boolean;

  @ApiPropertyOptional({
    nullable: true,
    description: 'When the note stops being true; null clears it',
  })
  @OptionalOrNull()
  @ValidateIf((_o, v) => v !== null)
  @IsDateString({}, { message: 'expiresAt must be an ISO 8601 date or null' })
  expiresAt?: string | null;
}

export class MemoryVersionDto implements MemoryVersion {
  @ApiProperty()
  text!: string;
  @ApiProperty()
  at!: string;
  @ApiProperty()
  reason!: string;
  @ApiProperty({ enum: ['owner', 'ai', 'consolidation'] })
  by!: 'owner' | 'ai' | 'consolidation';
}

export class MemoryNoteDto implements MemoryNoteView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  text!: string;
  @ApiProperty({ enum: MEMORY_SOURCES })
  source!: MemoryNoteView['source'];
  @ApiProperty({ enum: ['owner', 'third-party'] })
  trust!: MemoryNoteView['trust'];
  @ApiProperty({ enum: ['active', 'proposed', 'superseded'] })
  status!: MemoryNoteView['status'];
  @ApiProperty({ type: String, nullable: true })
  chatId!: string | null;
  @ApiProperty({ type: [String] })
  messageIds!: string[];
  @ApiProperty()
  observedAt!: string;
  @ApiProperty({ type: String, nullable: true })
  supersedes!: string | null;
  @ApiProperty({ type: String, nullable: true })
  supersededBy!: string | null;
  @ApiProperty({ type: String, nullable: true })
  expiresAt!: string | null;
  @ApiProperty({ type: [MemoryVersionDto] })
  history!: MemoryVersionDto[];
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class MemorySearchResultDto implements MemorySearchResult {
  @ApiProperty({ enum: ['note', 'message'] })
  kind!: 'note' | 'message';
  @ApiProperty()
  id!: string;
  @ApiProperty({
    description: "A contact's text comes fenced as third-party content",
  })
  text!: string;
  @ApiProperty()
  date!: string;
  @ApiProperty({ type: String, nullable: true })
  chatId!: string | null;
  @ApiPropertyOptional()
  messageId?: string;
  @ApiProperty({
    type: String,
    enum: [...MEMORY_SOURCES, 'assistant', 'cron', 'pulse'],
    description:
      'Notes: owner, contact, email, web, tool; messages: owner, assistant, contact, cron, pulse',
  })
  source!: MemorySearchResult['source'];
  @ApiProperty()
  score!: number;
}

export class MemoryChangeSourceDto implements MemoryChangeSource {
  @ApiProperty({ type: String, nullable: true })
  chatId!: string | null;
  @ApiProperty()
  messageId!: string;
}

export class MemoryRunChangeDto implements MemoryRunChange {
  @ApiProperty()
  noteId!: string;
  @ApiProperty({
    type: String,
    enum: ['merged', 'expired', 'superseded', 'proposed'],
  })
  action!: MemoryRunChange['action'];
  @ApiProperty()
  reason!: string;
  @ApiProperty({
    description: "The note's text before the change ('' for a proposal)",
  })
  prior!: string;
  @ApiPropertyOptional({
    description:
      'The text after it: the note merged into, the newer note, the proposal',
  })
  after?: string;
  @ApiPropertyOptional({ type: String, nullable: true })
  relatedNoteId?: string | null;
  @ApiPropertyOptional({ type: [MemoryChangeSourceDto] })
  sources?: MemoryChangeSourceDto[];
  @ApiPropertyOptional({ type: String, enum: ['rules', 'model'] })
  by?: 'rules' | 'model';
}

export class MemoryRunDto implements MemoryRunView {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  startedAt!: string;
  @ApiProperty({ type: String, enum: ['done', 'refused'] })
  outcome!: 'done' | 'refused';
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
  @ApiProperty()
  notesBefore!: number;
  @ApiProperty({ type: [MemoryRunChangeDto] })
  changes!: MemoryRunChangeDto[];
  @ApiProperty({
    type: String,
    enum: ['done', 'skipped', 'failed'],
    description:
      'The model part: skipped (no model, the budget refused: modelReason), failed (provider error or an answer outside the schema: error; nothing of it applied)',
  })
  modelOutcome!: MemoryRunModelOutcome;
  @ApiProperty({ type: String, nullable: true })
  modelReason!: string | null;
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
  @ApiProperty({ type: String, enum: ['schedule', 'owner'] })
  trigger!: 'schedule' | 'owner';
}

export class MemoryListDto implements MemoryListResponse {
  @ApiProperty({ type: [MemoryNoteDto] })
  notes!: MemoryNoteDto[];
  @ApiPropertyOptional({ type: [MemorySearchResultDto] })
  results?: MemorySearchResultDto[];
  @ApiPropertyOptional({
    type: MemoryRunDto,
    nullable: true,
    description: 'The latest nightly consolidation run',
  })
  lastRun?: MemoryRunDto | null;
}
