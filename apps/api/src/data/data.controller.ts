import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCookieAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type {
  CollectionDocumentsPage,
  CollectionInfo,
} from '@metatronos/shared-types';
import { DataService } from './data.service';
import { CollectionDocumentsQueryDto } from './dto/collection-documents-query.dto';
import {
  CollectionDocumentsPageDto,
  CollectionInfoDto,
} from './dto/collection.dto';

@ApiTags('data')
@ApiCookieAuth()
@ApiUnauthorizedResponse({ description: 'No owner session' })
@Controller('data/collections')
export class DataController {
  constructor(private readonly data: DataService) {}

  @Get()
  @ApiOperation({
    summary:
      'Collections of the database with their size and what the AI may do with them',
    description:
      'Sorted by name. Credential collections (auth_*) and server internals (system.*) are never listed. ' +
      'The AI-managed collections (master, contacts, schedule, cronjobs) are listed from day one, with count 0 until they exist.',
  })
  @ApiOkResponse({ type: CollectionInfoDto, isArray: true })
  list(): Promise<CollectionInfo[]> {
    return this.data.listCollections();
  }

  @Get(':name/documents')
  @ApiOperation({
    summary: 'One page of documents of a collection, newest first',
    description:
      'Documents as plain JSON (ObjectIds as hex strings, dates as ISO strings). Secret values are masked (••••abcd) ' +
      'exactly as the AI sees them: every key field of settings, and any current API key found in any document.',
  })
  @ApiParam({ name: 'name', example: 'contacts' })
  @ApiOkResponse({ type: CollectionDocumentsPageDto })
  @ApiBadRequestResponse({
    description:
      'limit outside 1..100, skip outside 0..1,000,000, or an impossible collection name',
  })
  @ApiNotFoundResponse({
    description: "Collection 'x' not found (also for private collections)",
  })
  documents(
    @Param('name') name: string,
    @Query() query: CollectionDocumentsQueryDto,
  ): Promise<CollectionDocumentsPage> {
    return this.data.documents(name, query.limit, query.skip);
  }
}
