import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
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
} from '@metatronos/shared-types';
import {
  MemoryListDto,
  MemoryListQueryDto,
  MemoryNoteDto,
  UpdateMemoryDto,
} from './dto/memory.dto';
import { MemoryConsolidation } from './memory-consolidation';
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
