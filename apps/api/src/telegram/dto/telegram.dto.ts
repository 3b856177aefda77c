import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  TELEGRAM_STATUSES,
  type CreateTelegramPermissionRequest,
  type TelegramInboundMessage,
  type TelegramPermission,
  type TelegramStatus,
  type TelegramStatusView,
  type UpdateTelegramPermissionRequest,
} from '@metatronos/shared-types';
import { IdFromNumber } from '../../http/id-from-number';
import { OptionalField } from '../../http/optional-field';

const TRUSTED_HELP =
  "Auto-replies in this chat may see the owner's memory (off by default: the sender is untrusted).";

export class TelegramStatusDto implements TelegramStatusView {
  @ApiProperty({ enum: TELEGRAM_STATUSES })
  status!: TelegramStatus;
  @ApiProperty({ type: String, nullable: true, example: 'my_metatron_bot' })
  username!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it is not connected, in plain words',
  })
  reason!: string | null;
}

export class CreateTelegramPermissionDto
  implements CreateTelegramPermissionRequest
{
  @ApiProperty({
    example: '123456789',
    description:
      "Telegram's chat id (negative for groups), as a string or a JSON number",
  })
  @OptionalField()
  // A JSON number is the same chat id: Telegram itself sends chat ids as numbers.
  @IdFromNumber()
  @IsString()
  @MaxLength(24)
  chatId!: string;

  @ApiProperty({ example: 'Ann', maxLength: 100 })
  @OptionalField()
  @IsString()
  @MaxLength(100)
  displayName!: string;

  @ApiPropertyOptional({ default: false })
  @OptionalField()
  @IsBoolean()
  canRead?: boolean;

  @ApiPropertyOptional({ default: false })
  @OptionalField()
  @IsBoolean()
  canReply?: boolean;

  @ApiPropertyOptional({ default: false, description: TRUSTED_HELP })
  @OptionalField()
  @IsBoolean()
  trusted?: boolean;
}

export class UpdateTelegramPermissionDto
  implements UpdateTelegramPermissionRequest
{
  @ApiPropertyOptional({ maxLength: 100 })
  @OptionalField()
  @IsString()
  @MaxLength(100)
  displayName?: string;

  @ApiPropertyOptional()
  @OptionalField()
  @IsBoolean()
  canRead?: boolean;

  @ApiPropertyOptional()
  @OptionalField()
  @IsBoolean()
  canReply?: boolean;

  @ApiPropertyOptional({ description: TRUSTED_HELP })
  @OptionalField()
  @IsBoolean()
  trusted?: boolean;
}

export class TelegramPermissionDto implements TelegramPermission {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  chatId!: string;
  @ApiProperty()
  displayName!: string;
  @ApiProperty()
  canRead!: boolean;
  @ApiProperty()
  canReply!: boolean;
  @ApiProperty()
  trusted!: boolean;
  @ApiProperty({ type: String, nullable: true })
  consoleChatId!: string | null;
  @ApiProperty({ type: String, nullable: true })
  autoReplyPausedUntil!: string | null;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class TelegramMessagesQueryDto {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

export class TelegramInboundMessageDto implements TelegramInboundMessage {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  chatId!: string;
  @ApiProperty({ enum: ['private', 'group', 'supergroup', 'channel'] })
  chatType!: 'private' | 'group' | 'supergroup' | 'channel';
  @ApiProperty({ type: String, nullable: true })
  chatTitle!: string | null;
  @ApiProperty()
  fromName!: string;
  @ApiProperty({ type: String, nullable: true })
  fromUsername!: string | null;
  @ApiProperty()
  text!: string;
  @ApiProperty()
  at!: string;
  @ApiProperty()
  processing!: string;
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
  @ApiProperty()
  permitted!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The auto-reply's answer, once there is one",
  })
  reply!: string | null;
}

export class TelegramSuccessDto {
  @ApiProperty({ example: true })
  success!: true;
}
