import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import type {
  StartRelayCallRequest,
  StartRelayCallResponse,
  VoiceProviderView,
} from '@metatronos/shared-types';
import { OptionalField } from '../http/optional-field';

export class StartRelayCallDto implements StartRelayCallRequest {
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

export class StartRelayCallResponseDto implements StartRelayCallResponse {
  @ApiProperty({ example: 'gemini_9c6574da8b8a41a18da9308f4ad974ce' })
  callId!: string;
  @ApiProperty({ example: '66f0c0ffee0000000000abcd' })
  chatId!: string;
  @ApiProperty({ enum: ['gemini'] })
  provider!: 'gemini';
  @ApiProperty({ example: 'gemini-live-2.5-flash-preview' })
  model!: string;
  @ApiProperty({
    example: '/api/voice/relay/gemini_9c6574da8b8a41a18da9308f4ad974ce',
  })
  socketPath!: string;
  @ApiProperty({ enum: [16000] })
  inputSampleRate!: 16000;
  @ApiProperty({ enum: [24000] })
  outputSampleRate!: 24000;
}

export class VoiceProviderQueryDto {
  @ApiPropertyOptional({ description: 'The chat; absent: a new chat' })
  @OptionalField()
  @IsString()
  chatId?: string;
}

export class VoiceProviderViewDto implements VoiceProviderView {
  @ApiProperty({
    enum: ['gemini', 'openai'],
    description:
      'gemini: POST /api/voice/relay-calls; openai: POST /api/voice/calls',
  })
  provider!: 'gemini' | 'openai';
  @ApiProperty({
    nullable: true,
    type: String,
    description: "The chat's model (or the primary model); null: none set",
  })
  model!: string | null;
}
