import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { OptionalField } from '../http/optional-field';
import type {
  StartVoiceCallRequest,
  StartVoiceCallResponse,
  VoiceCallView,
} from '@metatronos/shared-types';

/** Types here; the service checks the rest (blank, 64 KiB in bytes, SDP, the chat, the mode). */
export class StartVoiceCallDto implements StartVoiceCallRequest {
  @ApiProperty({
    description:
      "The browser's SDP offer (microphone track + data channel), at most 64 KiB",
  })
  @IsString({ message: 'sdp must be the SDP offer, as a string' })
  sdp!: string;

  @ApiPropertyOptional({
    description: 'The chat the call talks in; absent: a new chat',
  })
  @OptionalField()
  @IsString()
  chatId?: string;

  @ApiPropertyOptional({
    description: "The mode the call starts in; absent: the chat's mode",
    example: 'email',
  })
  @OptionalField()
  @IsString()
  mode?: string;
}

export class StartVoiceCallResponseDto implements StartVoiceCallResponse {
  @ApiProperty({ description: "The provider's SDP answer" })
  sdp!: string;
  @ApiProperty({ example: 'rtc_u1_9c6574da8b8a41a18da9308f4ad974ce' })
  callId!: string;
  @ApiProperty({ example: '66f0c0ffee0000000000abcd' })
  chatId!: string;
}

export class VoiceCallViewDto implements VoiceCallView {
  @ApiProperty()
  callId!: string;
  @ApiProperty()
  chatId!: string;
  @ApiProperty({ example: '2026-03-10T09:30:00.000Z' })
  startedAt!: string;
}

export class CurrentVoiceCallDto {
  @ApiProperty({ type: VoiceCallViewDto, nullable: true })
  call!: VoiceCallViewDto | null;
}
