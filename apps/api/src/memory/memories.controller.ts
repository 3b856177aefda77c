import {
  BadRequestException,
  Body,
  ConflictException,
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
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import {
  MEMORY_SEARCH_DEFAULT_LIMIT,
  type MemoryListResponse,
  type MemoryNoteView,
  type MemoryRunView,
} from '@metatronos/shared-types';
import {
  MemoryListDto,
  MemoryListQueryDto,
  MemoryNoteDto,
  MemoryRunDto,
  UpdateMemoryDto,
} from './dto/memory.dto';
import {
  ConsolidationRunning,
  MemoryConsolidation,
} from './memory-consolidation';
import { MemoryService } from './memory.service';

@ApiTags('memories')
@Controller('memories')
export class MemoriesController {
  constructor(
    private readonly memory: MemoryService,
    private readonly consolidation: MemoryConsolidation,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'The memory notes (newest first); with q, also what memory search finds in notes and messages',
  })
  @ApiOkResponse({ type: MemoryListDto })
  @ApiBadRequestResponse({
    description: 'q empty or too long, limit out of range',
  })
  async list(@Query() query: MemoryListQueryDto): Promise<MemoryListResponse> {
    const [notes, lastRun] = await Promise.all([
      this.memory.list(),
      this.consolidation.latest(),
    ]);
    if (query.q === undefined) return { notes, lastRun };
    const results = await this.memory.search({
      query: query.q,
      limit: query.limit ?? MEMORY_SEARCH_DEFAULT_LIMIT,
    });
    return { notes, results, lastRun };
  }

  @Post('consolidate')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run the nightly consolidation now (plain-text pass, then the model part within the budget); answers the run',
  })
  @ApiOkResponse({ type: MemoryRunDto })
  @ApiConflictResponse({ description: 'A consolidation is already running' })
  async consolidate(): Promise<MemoryRunView> {
    try {
      return await this.consolidation.runNow();
    } catch (error) {
      if (error instanceof ConsolidationRunning)
        throw new ConflictException(error.message);
      throw error;
    }
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Approve a proposed note: it becomes memory (recalled, searched)',
  })
  @ApiOkResponse({ type: MemoryNoteDto })
  @ApiNotFoundResponse({ description: 'No note with this id' })
  @ApiConflictResponse({ description: 'The note is not a proposal' })
  approve(@Param('id') id: string): Promise<MemoryNoteView> {
    return this.memory.approve(id);
  }

  @Post(':id/discard')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Discard a proposed note: it is gone, never remembered',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No note with this id' })
  @ApiConflictResponse({
    description: 'The note is not a proposal (forget it with DELETE)',
  })
  async discard(@Param('id') id: string): Promise<void> {
    await this.memory.discard(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Edit a note (the prior version is kept), approve a proposal, or set its expiry',
  })
  @ApiOkResponse({ type: MemoryNoteDto })
  @ApiBadRequestResponse({
    description: 'No field, or a field refused; nothing is written',
  })
  @ApiNotFoundResponse({ description: 'No note with this id' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateMemoryDto,
  ): Promise<MemoryNoteView> {
    if (
      body.text === undefined &&
      body.approve === undefined &&
      body.expiresAt === undefined
    )
      throw new BadRequestException(
        'Send at least one of text, approve, expiresAt',
      );
    return this.memory.update(
      id,
      {
        text: body.text,
        approve: body.approve,
        expiresAt:
          body.expiresAt === undefined
            ? undefined
            : body.expiresAt === null
              ? null
              : new Date(body.expiresAt),
      },
      'owner',
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Forget a note: gone from notes, search and the prompt at once, its earlier versions too',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No note with this id' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.memory.forget(id, 'owner');
  }
}
