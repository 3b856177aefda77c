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
import type {
  CreateWhatsAppPermissionRequest,
  UpdateWhatsAppPermissionRequest,
  WhatsAppInboundMessage,
  WhatsAppPermission,
} from '@metatronos/shared-types';
import { IdFromNumber } from '../../../http/id-from-number';
import { OptionalField } from '../../../http/optional-field';
import { WHATSAPP_DISPLAY_NAME_MAX_LENGTH } from '../whatsapp-permission-input';

const PHONE_HELP =
  'International format; every non-digit is stripped (7 to 15 digits remain), e.g. "+1 415 555 1234" → "14155551234". A JSON number is taken too.';
const TRUSTED_HELP =
  "Auto-replies to this contact may see the owner's memory (off by default: the sender is untrusted).";

/**
 * Both fields are checked by the service, so a missing one answers the seed's
 * "phoneNumber and displayName are required"; `null` is refused here, by name.
 */
export class CreateWhatsAppPermissionDto
  implements CreateWhatsAppPermissionRequest
{
  @ApiProperty({ example: '14155551234', description: PHONE_HELP })
  @OptionalField()
  @IdFromNumber()
  @IsString()
  @MaxLength(64)
  phoneNumber!: string;

  @ApiProperty({ example: 'Mom', maxLength: WHATSAPP_DISPLAY_NAME_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(WHATSAPP_DISPLAY_NAME_MAX_LENGTH)
  displayName!: string;

  @ApiPropertyOptional({
    default: false,
    description: 'The AI may read messages from this contact',
  })
  @OptionalField()
  @IsBoolean()
  canRead?: boolean;

  @ApiPropertyOptional({
    default: false,
    description:
      'The AI may reply to this contact (automatic replies included)',
  })
  @OptionalField()
  @IsBoolean()
  canReply?: boolean;

  @ApiPropertyOptional({ default: false, description: TRUSTED_HELP })
  @OptionalField()
  @IsBoolean()
  trusted?: boolean;
}

export class UpdateWhatsAppPermissionDto
  implements UpdateWhatsAppPermissionRequest
{
  @ApiPropertyOptional({ maxLength: WHATSAPP_DISPLAY_NAME_MAX_LENGTH })
  @OptionalField()
  @IsString()
  @MaxLength(WHATSAPP_DISPLAY_NAME_MAX_LENGTH)
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

export class WhatsAppPermissionDto implements WhatsAppPermission {
  @ApiProperty()
  id!: string;
  @ApiProperty({ example: '14155551234', description: 'Digits only, unique' })
  phoneNumber!: string;
  @ApiProperty({ example: 'Mom' })
  displayName!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Optional link to a `contacts` record',
  })
  contactId!: string | null;
  @ApiProperty()
  canRead!: boolean;
  @ApiProperty()
  canReply!: boolean;
  @ApiProperty({ description: TRUSTED_HELP })
  trusted!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The contact's dedicated auto-reply chat",
  })
  chatId!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Auto-replies to this contact are paused until then: the bot-loop guard stopped them. Null when never paused; POST …/resume-auto-reply lifts it',
  })
  autoReplyPausedUntil!: string | null;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class SuccessDto {
  @ApiProperty({ example: true })
  success!: true;
}

export class WhatsAppInboundQueryDto {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

export class WhatsAppInboundMessageDto implements WhatsAppInboundMessage {
  @ApiProperty()
  id!: string;
  @ApiProperty({ description: "The sender's digits" })
  phone!: string;
  @ApiProperty({ type: String, nullable: true })
  fromName!: string | null;
  @ApiProperty()
  text!: string;
  @ApiProperty()
  at!: string;
  @ApiProperty()
  processing!: string;
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
  @ApiProperty({ description: 'The sender has a permission with canRead' })
  permitted!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The auto-reply's answer, once there is one",
  })
  reply!: string | null;
}
