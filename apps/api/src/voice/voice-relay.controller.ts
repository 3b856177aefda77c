import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  StartRelayCallResponse,
  VoiceProviderView,
} from '@metatronos/shared-types';
import {
  StartRelayCallDto,
  StartRelayCallResponseDto,
  VoiceProviderQueryDto,
  VoiceProviderViewDto,
} from './voice-relay.dto';
import { GeminiRelayService } from './gemini-relay.service';

@ApiTags('voice')
@Controller('voice')
export class VoiceRelayController {
  constructor(private readonly relay: GeminiRelayService) {}

  @Post('relay-calls')
  @ApiOperation({
    summary:
      "Starts a voice call through the server's Gemini Live relay (the chat's model is a Gemini Live model)",
    description:
      'Answers where to open the call\'s audio WebSocket (`socketPath`, same origin, the session cookie): binary frames of PCM16 LE mono 16 kHz in, PCM16 LE mono 24 kHz out, and JSON text frames (`ready`, `interrupted`, `tool`, `mode`, `reconnected`, `ended`). Hang up with `DELETE /api/voice/calls/:callId` or a `{"type":"hangup"}` frame.',
  })
  @ApiCreatedResponse({ type: StartRelayCallResponseDto })
  @ApiBadRequestResponse({ description: 'Unknown chat or mode' })
  @ApiConflictResponse({
    description:
      "The chat's model is not a Gemini Live model, no Gemini key, or a call is already live (named)",
  })
  @ApiBadGatewayResponse({
    description: 'Gemini refused the key or the model (in plain words)',
  })
  start(@Body() body: StartRelayCallDto): Promise<StartRelayCallResponse> {
    return this.relay.start(body);
  }

  @Get('provider')
  @ApiOperation({
    summary:
      "Which provider a call in this chat talks through: the chat's model (or the primary model) decides",
  })
  @ApiOkResponse({ type: VoiceProviderViewDto })
  @ApiBadRequestResponse({ description: 'Unknown chat' })
  provider(@Query() query: VoiceProviderQueryDto): Promise<VoiceProviderView> {
    return this.relay.providerFor(query.chatId);
  }
}
