import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsMongoId,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import {
  CHAT_TITLE_MAX_LENGTH,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MESSAGE_MAX_LENGTH,
  type AttachmentKind,
  type MessageAttachment,
  type MessageAuthor,
  type AssistantPart,
  type ChatMessage,
  type ChatSummary,
  type CreateChatRequest,
  type MessageStatus,
  type ChatKind,
  type RenameChatRequest,
  type SendMessageRequest,
  type TokenUsage,
} from '@metatronos/shared-types';

const NOT_BLANK = /\S/;

export class CreateChatDto implements CreateChatRequest {
  @ApiPropertyOptional({
    maxLength: CHAT_TITLE_MAX_LENGTH,
    description:
      'Defaults to "New chat"; the first message then names the chat',
  })
  @IsOptional()
  @IsString()
  @MaxLength(CHAT_TITLE_MAX_LENGTH)
  title?: string;
}

export class RenameChatDto implements RenameChatRequest {
  @ApiProperty({ maxLength: CHAT_TITLE_MAX_LENGTH })
  @IsString()
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  @MaxLength(CHAT_TITLE_MAX_LENGTH)
  title!: string;
}

export class SendMessageDto implements SendMessageRequest {
  @ApiProperty({ maxLength: MESSAGE_MAX_LENGTH })
  @IsString()
  @MinLength(1, { message: 'content must not be empty' })
  @Matches(NOT_BLANK, { message: 'content must not be blank' })
  @MaxLength(MESSAGE_MAX_LENGTH)
  content!: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_ATTACHMENTS_PER_MESSAGE,
    description:
      'Ids from POST /api/attachments, each not yet sent with another message',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ATTACHMENTS_PER_MESSAGE, {
    message: `at most ${MAX_ATTACHMENTS_PER_MESSAGE} attachments go with one message`,
  })
  @ArrayUnique({ message: 'attachmentIds must not repeat an id' })
  @IsMongoId({
    each: true,
    message: 'each of attachmentIds must be an attachment id',
  })
  attachmentIds?: string[];

  @ApiPropertyOptional({
    description:
      "In a contact's chat (kind whatsapp): offer the owner's full tool set for this message instead of the contact's restricted one. Ignored elsewhere.",
  })
  @IsOptional()
  @IsBoolean()
  fullTools?: boolean;
}

export class MessagesQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({
    description:
      'A message id: return the messages just before it (older page)',
  })
  @IsOptional()
  @IsMongoId({ message: 'before must be a message id' })
  before?: string;
}

export class ChatSummaryDto implements ChatSummary {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  title!: string;
  @ApiProperty({
    enum: ['chat', 'cron', 'pulse'],
    description: "The owner's chat, a scheduled job's chat, or the Pulse chat",
  })
  kind!: ChatKind;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
  @ApiProperty({ description: 'A reply is being generated' })
  running!: boolean;
}

export class MessageAttachmentDto implements MessageAttachment {
  @ApiProperty({ description: 'The file is at /api/attachments/<id>' })
  id!: string;
  @ApiProperty()
  name!: string;
  @ApiProperty()
  mime!: string;
  @ApiProperty()
  size!: number;
  @ApiProperty({ enum: ['image', 'text', 'pdf'] })
  kind!: AttachmentKind;
}

export class ChatMessageDto implements ChatMessage {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  chatId!: string;
  @ApiProperty({ enum: ['user', 'assistant'] })
  role!: 'user' | 'assistant';
  @ApiProperty()
  content!: string;
  @ApiPropertyOptional({
    description:
      'Assistant replies: text and tool calls (id, name, arguments, result, error, durationMs) in order',
    type: 'array',
    items: { type: 'object' },
  })
  parts?: AssistantPart[];
  @ApiProperty({ enum: ['streaming', 'complete', 'stopped', 'error'] })
  status!: MessageStatus;
  @ApiPropertyOptional({ type: String, nullable: true })
  error?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true })
  model?: string | null;
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: true,
  })
  usage?: TokenUsage | null;
  @ApiPropertyOptional({
    type: [MessageAttachmentDto],
    description: 'User messages sent with files',
  })
  attachments?: MessageAttachment[];
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description:
      "User messages a WhatsApp contact wrote: { kind: 'contact', channel: 'whatsapp', name, phone }",
  })
  author?: MessageAuthor | null;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class StopReplyDto {
  @ApiProperty({ description: 'False when no reply was running' })
  stopped!: boolean;
}
