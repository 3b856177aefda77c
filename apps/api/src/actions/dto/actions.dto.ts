import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsMongoId, IsObject, Max, Min } from 'class-validator';
import type {
  ActionEffect,
  ActionReason,
  ActionSource,
  ActionStatus,
  ActionsQuery,
  ApproveActionResponse,
  EditActionRequest,
  PendingActionView,
  TaintMark,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';
import { MAX_ACTIONS_LIMIT } from '../pending-actions.service';

export const ACTION_STATUSES: readonly ActionStatus[] = [
  'pending',
  'running',
  'done',
  'failed',
  'discarded',
  'expired',
];
const ACTION_SOURCES: readonly ActionSource[] = [
  'chat',
  'cron',
  'pulse',
  'auto-reply',
  'voice',
];
const ACTION_EFFECTS: readonly ActionEffect[] = [
  'send',
  'grant',
  'delete',
  'move',
  'schedule',
  'memory',
  'fetch',
];

export class TaintMarkDto implements TaintMark {
  @ApiProperty({ example: 'url_fetch' })
  by!: string;
  @ApiProperty({ example: 'a web page from example.org' })
  text!: string;
  @ApiProperty()
  at!: string;
}

export class ActionReasonDto implements ActionReason {
  @ApiProperty({ enum: ['unattended', 'tainted', 'always-confirm', 'spoken'] })
  kind!: ActionReason['kind'];
  @ApiProperty({ example: 'this turn read a web page from example.org' })
  text!: string;
}

export class PendingActionDto implements PendingActionView {
  @ApiProperty()
  id!: string;
  @ApiProperty({ example: 'whatsapp_send_message' })
  tool!: string;
  @ApiProperty({
    description: 'Exactly what would happen: to whom, which text, which event',
  })
  summary!: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true })
  chatId!: string | null;
  @ApiProperty({ type: String, nullable: true })
  messageId!: string | null;
  @ApiProperty({ type: String, nullable: true })
  jobId!: string | null;
  @ApiProperty({ enum: ACTION_SOURCES })
  source!: ActionSource;
  @ApiProperty()
  tainted!: boolean;
  @ApiProperty({ type: [TaintMarkDto] })
  taint!: TaintMarkDto[];
  @ApiProperty({ type: ActionReasonDto })
  reason!: ActionReasonDto;
  @ApiProperty({ enum: ACTION_EFFECTS })
  effect!: ActionEffect;
  @ApiProperty({ enum: ACTION_STATUSES })
  status!: ActionStatus;
  @ApiProperty({
    nullable: true,
    description: "The tool's answer after approve",
  })
  result!: unknown;
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
  @ApiProperty({ description: '24 h after createdAt' })
  expiresAt!: string;
}

export class ActionsQueryDto implements ActionsQuery {
  @ApiPropertyOptional({ enum: ACTION_STATUSES })
  @OptionalField()
  @IsIn(ACTION_STATUSES)
  status?: ActionStatus;

  @ApiPropertyOptional({
    description: 'Only the actions proposed in this chat',
  })
  @OptionalField()
  @IsMongoId({ message: 'chatId must be a chat id' })
  chatId?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_ACTIONS_LIMIT, default: 100 })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ACTIONS_LIMIT)
  limit?: number;
}

export class EditActionDto implements EditActionRequest {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The call's new arguments, checked by the tool's own schema",
  })
  @IsObject()
  arguments!: Record<string, unknown>;
}

export class ApproveActionResponseDto implements ApproveActionResponse {
  @ApiProperty({ enum: ['done', 'failed'] })
  status!: 'done' | 'failed';
  @ApiProperty({ nullable: true, description: "The tool's answer" })
  result!: unknown;
  @ApiPropertyOptional({ description: 'Why it failed' })
  error?: string;
}
