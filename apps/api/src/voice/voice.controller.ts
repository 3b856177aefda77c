import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
} from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { StartVoiceCallResponse } from '@metatronos/shared-types';
import {
  CurrentVoiceCallDto,
  StartVoiceCallDto,
  StartVoiceCallResponseDto,
} from './voice.dto';
import { VoiceCallsService } from './voice-calls.service';

@ApiTags('voice')
@Controller('voice/calls')
export class VoiceController {
  constructor(private readonly calls: VoiceCallsService) {}

  @Post()
  @ApiOperation({
    summary:
      "Starts a voice call: the browser's SDP offer goes to the realtime provider with the owner's key; answers the provider's SDP",
  })
  @ApiCreatedResponse({ type: StartVoiceCallResponseDto })
  @ApiBadRequestResponse({
    description:
      'sdp missing, not a string, empty or over 64 KiB; unknown chat or mode',
  })
  @ApiConflictResponse({
    description: 'No OpenAI key, or a call is already live (named)',
  })
  @ApiBadGatewayResponse({
    description: 'The provider refused the key or the model (in plain words)',
  })
  start(@Body() body: StartVoiceCallDto): Promise<StartVoiceCallResponse> {
    return this.calls.start(body);
  }

  @Get('current')
  @ApiOperation({ summary: 'The live voice call, or null' })
  @ApiOkResponse({ type: CurrentVoiceCallDto })
  current(): CurrentVoiceCallDto {
    return { call: this.calls.current() };
  }

  @Delete(':callId')
  @HttpCode(204)
  @ApiOperation({
    summary: "Hangs up: the provider's hang-up, and the control channel closed",
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No live call has this id' })
  async hangup(@Param('callId') callId: string): Promise<void> {
    await this.calls.hangup(callId);
  }
}
