import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  ApproveActionResponse,
  PendingActionView,
} from '@metatronos/shared-types';
import {
  ActionsQueryDto,
  ApproveActionResponseDto,
  EditActionDto,
  PendingActionDto,
} from './dto/actions.dto';
import { PendingActionsService } from './pending-actions.service';

@ApiTags('actions')
@Controller('actions')
export class ActionsController {
  constructor(private readonly actions: PendingActionsService) {}

  @Get()
  @ApiOperation({
    summary:
      'Tool calls held for the owner (sends, grants, deletions… of unattended runs and of turns that read third-party content), newest first',
  })
  @ApiOkResponse({ type: [PendingActionDto] })
  @ApiBadRequestResponse({ description: 'A bad status, chatId or limit' })
  list(@Query() query: ActionsQueryDto): Promise<PendingActionView[]> {
    return this.actions.list(query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One pending action' })
  @ApiOkResponse({ type: PendingActionDto })
  @ApiNotFoundResponse({ description: '"Pending action not found"' })
  get(@Param('id') id: string): Promise<PendingActionView> {
    return this.actions.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      "Edit a pending action's arguments (checked by the tool's schema; the summary is said again)",
  })
  @ApiOkResponse({ type: PendingActionDto })
  @ApiBadRequestResponse({
    description: "The tool's schema refuses the arguments",
  })
  @ApiNotFoundResponse({ description: '"Pending action not found"' })
  @ApiConflictResponse({
    description: 'No longer pending (approved, discarded or expired)',
  })
  edit(
    @Param('id') id: string,
    @Body() body: EditActionDto,
  ): Promise<PendingActionView> {
    return this.actions.edit(id, body.arguments);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run exactly the stored call once (not the model again): done with the result, or failed with the error',
  })
  @ApiOkResponse({ type: ApproveActionResponseDto })
  @ApiNotFoundResponse({ description: '"Pending action not found"' })
  @ApiConflictResponse({
    description:
      'Already approved (or being approved), discarded or expired: nothing runs',
  })
  @ApiBadRequestResponse({
    description:
      'A body with fields: arguments change only through PATCH (Edit), which shows the change; nothing runs',
  })
  approve(
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<ApproveActionResponse> {
    // Approve runs what the owner saw: a changed call must go through Edit first.
    if (body && typeof body === 'object' && Object.keys(body).length > 0)
      throw new BadRequestException(
        'Approve takes no body: to change the arguments, edit the action first (PATCH /api/actions/:id), then approve what it shows. Nothing ran.',
      );
    return this.actions.approve(id);
  }

  @Post(':id/discard')
  @HttpCode(200)
  @ApiOperation({ summary: 'Drop a pending action: nothing runs' })
  @ApiOkResponse({ type: PendingActionDto })
  @ApiNotFoundResponse({ description: '"Pending action not found"' })
  @ApiConflictResponse({
    description: 'Already approved, discarded or expired',
  })
  discard(@Param('id') id: string): Promise<PendingActionView> {
    return this.actions.discard(id);
  }
}
