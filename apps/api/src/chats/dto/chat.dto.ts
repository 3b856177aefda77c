import {
  ApiProperty,
  ApiPropertyOptional,
  getSchemaPath,
} from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsMongoId,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import {
  ATTACHMENT_KINDS,
  CHAT_KINDS,
  CONTACT_CHANNELS,
  CHAT_SEARCH_MAX_LENGTH,
  CHAT_SEARCH_MAX_RESULTS,
  CHAT_TITLE_MAX_LENGTH,
  DELIVERY_CHANNELS,
  DELIVERY_STATUSES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MESSAGE_MAX_LENGTH,
  MESSAGE_ROLES,
  MESSAGE_STATUSES,
  MESSAGE_TRIGGERS,
  type MessageAuthor,
  type MessageTrigger,
  type AssistantPart,
  type AttachmentKind,
  type ChatKind,
  type ContactChannel,
  type ChatListQuery,
  type ChatMessage,
  type ChatPromptPreview,
  type ChatSummary,
  type CreateChatRequest,
  type DeliveryChannel,
  type DeliveryStatus,
  type MessageAttachment,
  type MessageDelivery,
  type MessageRole,
  type MessageStatus,
  type MessagesQuery,
  type MessageVersions,
  type RegenerateReplyRequest,
  type UpdateChatRequest,
  type ModePart,
  type ModeSwitchBy,
  type SendMessageRequest,
  type StopReplyResponse,
  type TokenUsage,
  type TextPart,
  type ToolCallPart,
} from '@metatronos/shared-types';
import { TaintMarkDto } from '../../actions/dto/actions.dto';
import { OptionalField, OptionalOrNull } from '../../http/optional-field';

const NOT_BLANK = /\S/;

export class CreateChatDto implements CreateChatRequest {
  @ApiPropertyOptional({
    maxLength: CHAT_TITLE_MAX_LENGTH,
    description:
      'Defaults to "New chat"; the first message then names the chat',
  })
  @OptionalField()
  @IsString()
  @MaxLength(CHAT_TITLE_MAX_LENGTH)
  title?: string;
}

export class UpdateChatDto implements UpdateChatRequest {
  @ApiPropertyOptional({ maxLength: CHAT_TITLE_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  @MaxLength(CHAT_TITLE_MAX_LENGTH)
  title?: string;

  @ApiPropertyOptional({
    example: 'data',
    description:
      "Switch the conversation's mode (one of the modes of GET /api/tools); stored as an event in the chat",
  })
  @OptionalField()
  @IsString()
  @MaxLength(32)
  mode?: string;

  @ApiPropertyOptional({ description: 'Pinned chats come first in the list' })
  @OptionalField()
  @IsBoolean({ message: 'pinned must be true or false' })
  pinned?: boolean;

  @ApiPropertyOptional({
    description:
      'Archived chats leave the list; `GET /api/chats?archived=true` lists them',
  })
  @OptionalField()
  @IsBoolean({ message: 'archived must be true or false' })
  archived?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 240,
    example: 'gemini-2.5-flash',
    description:
      "The model for this chat's replies (it must route to a configured provider, as the primary model must); null or '' goes back to the primary model",
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(240)
  model?: string | null;
}

export class ChatListQueryDto implements ChatListQuery {
  @ApiPropertyOptional({
    maxLength: CHAT_SEARCH_MAX_LENGTH,
    description: `Words to find in titles and message text, case-insensitive; at most ${CHAT_SEARCH_MAX_RESULTS} chats answer`,
  })
  @OptionalField()
  @IsString()
  @MaxLength(CHAT_SEARCH_MAX_LENGTH, {
    message: `q must be at most ${CHAT_SEARCH_MAX_LENGTH} characters`,
  })
  q?: string;

  @ApiPropertyOptional({
    description: 'true: the archived chats (only they); default false',
  })
  @OptionalField()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean({ message: 'archived must be true or false' })
  archived?: boolean;
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
  @OptionalField()
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
  @OptionalField()
  @IsBoolean()
  fullTools?: boolean;

  @ApiPropertyOptional({
    description:
      "Allow this one reply over the daily and monthly spend caps (after a reply stopped at a cap). Unattended caps and the pause after a provider's 402 do not apply to the owner's chat.",
  })
  @OptionalField()
  @IsBoolean()
  allowOverBudget?: boolean;
}

export class RegenerateReplyDto implements RegenerateReplyRequest {
  @ApiPropertyOptional({
    maxLength: MESSAGE_MAX_LENGTH,
    description:
      'Edit and resend: the new text of your message (`messageId` itself, or the one the reply `messageId` answers), stored as a new version of it before the new reply starts. Required when `messageId` is your message. Absent with a reply: a new version of the reply to the same message.',
  })
  @OptionalField()
  @IsString()
  @MinLength(1, { message: 'content must not be empty' })
  @Matches(NOT_BLANK, { message: 'content must not be blank' })
  @MaxLength(MESSAGE_MAX_LENGTH)
  content?: string;

  @ApiPropertyOptional({
    description:
      "In a contact's chat (kind whatsapp): offer the owner's full tool set for the new reply. Ignored elsewhere.",
  })
  @OptionalField()
  @IsBoolean()
  fullTools?: boolean;
}

export class MessagesQueryDto implements MessagesQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({
    description:
      'A message id: return the messages just before it (older page)',
  })
  @OptionalField()
  @IsMongoId({ message: 'before must be a message id' })
  before?: string;
}

export class ChatSummaryDto implements ChatSummary {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  title!: string;
  @ApiProperty({ description: 'Listed before the others' })
  pinned!: boolean;
  @ApiProperty({ description: 'Only listed with ?archived=true' })
  archived!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "This chat's model; null: the primary model from the settings",
  })
  model!: string | null;
  @ApiProperty({
    enum: CHAT_KINDS,
    description:
      "The owner's chat, a scheduled job's chat, the Pulse chat, or a WhatsApp contact's auto-reply chat",
  })
  kind!: ChatKind;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
  @ApiProperty({ description: 'A reply is being generated' })
  running!: boolean;
  @ApiProperty({
    example: 'default',
    description: "The conversation's mode: which tools its turns are offered",
  })
  mode!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The account chosen for the mode (select_account)',
  })
  accountId!: string | null;
  @ApiPropertyOptional({
    description:
      'Search answers only: the words around the first message text holding the search (not when only the title matched)',
  })
  snippet?: string;
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
  @ApiProperty({ enum: ATTACHMENT_KINDS })
  kind!: AttachmentKind;
}

/** A piece of reply text (`parts` item). */
export class TextPartDto implements TextPart {
  @ApiProperty({ enum: ['text'] })
  type!: 'text';
  @ApiProperty()
  text!: string;
}

/** A tool call and its outcome, where it happened in the reply (`parts` item). */
export class ToolCallPartDto implements ToolCallPart {
  @ApiProperty({ enum: ['tool_call'] })
  type!: 'tool_call';
  @ApiProperty({ description: "The provider's call id" })
  id!: string;
  @ApiProperty({ example: 'db_query' })
  name!: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The JSON string the model received; null while the call runs',
  })
  result!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Set when the tool failed, timed out or was refused',
  })
  error!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  durationMs!: number | null;
}

/** A mode switch, shown as a small event line in the chat (`parts` item). */
export class ModePartDto implements ModePart {
  @ApiProperty({ enum: ['mode'] })
  type!: 'mode';
  @ApiProperty({ example: 'data' })
  mode!: string;
  @ApiProperty({ enum: ['model', 'owner'] })
  by!: ModeSwitchBy;
}

/** Schemas only referenced by `oneOf` (the document builder registers them). */
export const CHAT_EXTRA_MODELS = [TextPartDto, ToolCallPartDto, ModePartDto];

export class TokenUsageDto implements TokenUsage {
  @ApiPropertyOptional()
  inputTokens?: number;
  @ApiPropertyOptional()
  outputTokens?: number;
  @ApiPropertyOptional()
  totalTokens?: number;
}

export class MessageAuthorDto implements MessageAuthor {
  @ApiProperty({ enum: ['contact'] })
  kind!: 'contact';
  @ApiProperty({ enum: CONTACT_CHANNELS })
  channel!: ContactChannel;
  @ApiProperty({ description: "The contact's name as the owner saved it" })
  name!: string;
  @ApiPropertyOptional({
    description: 'WhatsApp: digits only, country code first',
  })
  phone?: string;
  @ApiPropertyOptional({ description: 'Telegram: the chat id' })
  telegramChatId?: string;
}

export class MessageDeliveryDto implements MessageDelivery {
  @ApiProperty({ enum: DELIVERY_CHANNELS })
  channel!: DeliveryChannel;
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    description:
      '`not-sent`: on purpose (replies to the contact are off, empty answer); `failed`: the channel refused or the server stopped',
  })
  status!: DeliveryStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it was not sent, for the owner',
  })
  detail!: string | null;
  @ApiProperty({ format: 'date-time' })
  at!: string;
}

export class MessageVersionsDto implements MessageVersions {
  @ApiProperty({
    description: 'Which version is shown, 1 = the first written',
    minimum: 1,
  })
  index!: number;
  @ApiProperty({ description: 'How many versions the message has', minimum: 2 })
  count!: number;
}

export class ChatMessageDto implements ChatMessage {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  chatId!: string;
  @ApiProperty({ enum: MESSAGE_ROLES })
  role!: MessageRole;
  @ApiProperty()
  content!: string;
  @ApiPropertyOptional({
    description:
      'Assistant replies: text, tool calls and mode switches, in order (a switch by the owner is a message of its own)',
    type: 'array',
    items: {
      oneOf: [
        { $ref: getSchemaPath(TextPartDto) },
        { $ref: getSchemaPath(ToolCallPartDto) },
        { $ref: getSchemaPath(ModePartDto) },
      ],
      discriminator: {
        propertyName: 'type',
        mapping: {
          text: getSchemaPath(TextPartDto),
          tool_call: getSchemaPath(ToolCallPartDto),
          mode: getSchemaPath(ModePartDto),
        },
      },
    },
  })
  parts?: AssistantPart[];
  @ApiProperty({ enum: MESSAGE_STATUSES })
  status!: MessageStatus;
  @ApiPropertyOptional({ type: String, nullable: true })
  error?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true })
  model?: string | null;
  @ApiPropertyOptional({
    type: TokenUsageDto,
    nullable: true,
    description: 'Tokens of the reply, when the provider reports them',
  })
  usage?: TokenUsage | null;
  @ApiPropertyOptional({
    type: [MessageAttachmentDto],
    description: 'User messages sent with files',
  })
  attachments?: MessageAttachment[];
  @ApiPropertyOptional({
    type: MessageAuthorDto,
    nullable: true,
    description: 'User messages a WhatsApp contact wrote (not the owner)',
  })
  author?: MessageAuthor | null;
  @ApiPropertyOptional({
    enum: MESSAGE_TRIGGERS,
    description:
      "User messages the scheduler wrote: a job's instruction (cron) or a Pulse prompt (pulse). Absent: a person wrote it",
  })
  trigger?: MessageTrigger;
  @ApiPropertyOptional({
    type: MessageDeliveryDto,
    nullable: true,
    description:
      'WhatsApp auto-replies: whether the reply went out to the contact. Absent for replies that go nowhere else',
  })
  delivery?: MessageDelivery | null;
  @ApiPropertyOptional({
    type: MessageVersionsDto,
    description:
      'The message has other versions (an edit or a regenerate); switch with POST /api/chats/{id}/messages/{messageId}/versions/{n}. Absent: only one',
  })
  versions?: MessageVersions;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class StopReplyDto implements StopReplyResponse {
  @ApiProperty({ description: 'False when no reply was running' })
  stopped!: boolean;
}

export class ChatPromptPreviewDto implements ChatPromptPreview {
  @ApiProperty()
  chatId!: string;

  @ApiProperty({ description: "The mode the chat's next turn starts in" })
  mode!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The system prompt of the chat's next request; null when the core instruction is blank",
  })
  prompt!: string | null;

  @ApiProperty({
    type: [TaintMarkDto],
    description:
      'What third-party content marked the newest reply; the prompt then carries a "Third-party content in this turn" section',
  })
  taint!: TaintMarkDto[];
}
