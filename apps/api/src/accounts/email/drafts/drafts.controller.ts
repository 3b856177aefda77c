import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { EmailDraftView } from '@metatronos/shared-types';
import { DraftsService } from './drafts.service';
import {
  DraftsQueryDto,
  EmailDraftDto,
  UpdateEmailDraftDto,
} from './dto/drafts.dto';

@ApiTags('drafts')
@Controller('drafts')
export class DraftsController {
  constructor(private readonly drafts: DraftsService) {}

  @Get()
  @ApiOperation({
    summary:
      'Email drafts the AI wrote in jobs, Pulse and auto-replies, newest first (optionally of one status)',
  })
  @ApiOkResponse({ type: [EmailDraftDto] })
  @ApiBadRequestResponse({
    description: 'status is not pending, sent or failed',
  })
  list(@Query() query: DraftsQueryDto): Promise<EmailDraftView[]> {
    return this.drafts.list(query.status);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Edit a pending or failed draft (recipients, subject, text)',
  })
  @ApiOkResponse({ type: EmailDraftDto })
  @ApiBadRequestResponse({ description: 'An address or field is not valid' })
  @ApiNotFoundResponse({ description: '"Draft not found"' })
  @ApiConflictResponse({ description: 'The draft was already sent' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateEmailDraftDto,
  ): Promise<EmailDraftView> {
    return this.drafts.update(id, body);
  }

  @Post(':id/send')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Send a draft through its account's SMTP server (replies keep their thread); a failure marks it failed with the reason",
  })
  @ApiOkResponse({ type: EmailDraftDto })
  @ApiBadRequestResponse({
    description:
      'The account is gone or the server refused the recipients (the draft is marked failed)',
  })
  @ApiBadGatewayResponse({
    description:
      'The mail server could not be reached or refused the login (the draft is marked failed)',
  })
  @ApiNotFoundResponse({ description: '"Draft not found"' })
  @ApiConflictResponse({ description: '"This draft was already sent"' })
  send(@Param('id') id: string): Promise<EmailDraftView> {
    return this.drafts.send(id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Discard a draft' })
  @ApiNoContentResponse({ description: 'Discarded' })
  @ApiNotFoundResponse({ description: '"Draft not found"' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.drafts.remove(id);
  }
}
