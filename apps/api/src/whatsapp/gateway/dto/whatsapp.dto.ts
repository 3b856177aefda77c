import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsString, MaxLength, Min } from 'class-validator';
import {
  WHATSAPP_CONNECT_RESULTS,
  WHATSAPP_LINK_PROBLEMS,
  WHATSAPP_MESSAGES_DEFAULT_LIMIT,
  WHATSAPP_MESSAGES_MAX_LIMIT,
  WHATSAPP_STATUSES,
  type BufferedMessage,
  type WhatsAppConnectResponse,
  type WhatsAppConnectResult,
  type WhatsAppDisconnectRequest,
  type WhatsAppDisconnectResponse,
  type WhatsAppLinkProblem,
  type WhatsAppMessagesQuery,
  type WhatsAppMessagesResponse,
  type WhatsAppQrResponse,
  type WhatsAppStatus,
  type WhatsAppStatusView,
} from '@metatronos/shared-types';
import { OptionalField } from '../../../http/optional-field';

export class WhatsAppStatusDto implements WhatsAppStatusView {
  @ApiProperty({ enum: WHATSAPP_STATUSES })
  status!: WhatsAppStatus;
  @ApiProperty({ type: String, nullable: true, example: '14155551234' })
  phoneNumber!: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Why the link stopped or is retrying (logged out, forbidden, connection closed), null otherwise',
  })
  reason?: string | null;
  @ApiPropertyOptional({
    enum: WHATSAPP_LINK_PROBLEMS,
    nullable: true,
    description:
      '`reason` as a code: `logged_out` and `forbidden` stop the link, the others come with a reconnect; null when the link is fine',
  })
  problem?: WhatsAppLinkProblem | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'When the next reconnect attempt is due (ISO), while backing off',
  })
  reconnectAt?: string | null;
}

export class WhatsAppConnectResultDto implements WhatsAppConnectResponse {
  @ApiProperty({ enum: WHATSAPP_CONNECT_RESULTS })
  status!: WhatsAppConnectResult;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Only with `already_connected`',
  })
  phoneNumber?: string | null;
}

export class WhatsAppQrDto implements WhatsAppQrResponse {
  @ApiProperty({
    example: 'data:image/png;base64,iVBORw0KGgo…',
    description: 'PNG data URL, 256×256',
  })
  qr!: string;
}

export class WhatsAppDisconnectDto implements WhatsAppDisconnectRequest {
  /** Also log the device out and delete the saved session (`DATA_DIR/whatsapp-auth`). */
  @ApiPropertyOptional({ default: false })
  @OptionalField()
  @IsBoolean()
  clearSession?: boolean;
}

export class WhatsAppDisconnectResultDto implements WhatsAppDisconnectResponse {
  @ApiProperty({ enum: ['disconnected'] satisfies WhatsAppStatus[] })
  status!: 'disconnected';
}

export class WhatsAppMessagesQueryDto implements WhatsAppMessagesQuery {
  /** Phone digits; messages whose sender or recipient contains them. */
  @ApiPropertyOptional({ example: '14155551234' })
  @OptionalField()
  @IsString()
  @MaxLength(64)
  contact?: string;

  @ApiPropertyOptional({
    default: WHATSAPP_MESSAGES_DEFAULT_LIMIT,
    minimum: 1,
    description: `Capped at ${WHATSAPP_MESSAGES_MAX_LIMIT}`,
  })
  @OptionalField()
  // Only whole decimal numbers pass; anything else becomes NaN and fails the one check (one message, not two).
  @Transform(({ value }) =>
    typeof value === 'string' && /^\d{1,6}$/.test(value)
      ? Number(value)
      : Number.NaN,
  )
  @Min(1, { message: 'limit must be a positive whole number' })
  limit?: number;
}

export class BufferedMessageDto implements BufferedMessage {
  @ApiProperty({ example: '3EB0A7B1C2D3' })
  id!: string;
  @ApiProperty({ example: '14155551234@s.whatsapp.net' })
  from!: string;
  @ApiProperty({ type: String, nullable: true, example: 'Alice' })
  fromName!: string | null;
  @ApiProperty({ example: '19876543210@s.whatsapp.net' })
  to!: string;
  @ApiProperty({ example: 'Hey, are you around?' })
  body!: string;
  @ApiProperty({
    description: 'Milliseconds since epoch',
    example: 1740567890000,
  })
  timestamp!: number;
  @ApiProperty()
  fromMe!: boolean;
  @ApiProperty()
  isGroup!: boolean;
}

export class WhatsAppMessagesDto implements WhatsAppMessagesResponse {
  @ApiProperty({ type: [BufferedMessageDto] })
  messages!: BufferedMessageDto[];
}
