import {
  Controller,
  Get,
  HttpCode,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCookieAuth,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import type { Request, Response } from 'express';
import type { RestoreResult } from '@metatronos/shared-types';
import { contentDisposition } from '../attachments/attachments.controller';
import { BackupService } from './backup.service';

export class RestoreQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      'Restore over an instance that already has chats, replacing all its data (otherwise 409)',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  replace?: 'true' | 'false';
}

class RestoredCollectionDto {
  @ApiProperty()
  name!: string;
  @ApiProperty()
  count!: number;
}

class RestoreResultDto implements RestoreResult {
  @ApiProperty({ enum: [true] })
  restored!: true;
  @ApiProperty({ description: 'The MetatronOS version that made the backup' })
  appVersion!: string;
  @ApiProperty({ description: 'When the backup was made (ISO 8601)' })
  createdAt!: string;
  @ApiProperty({ type: [RestoredCollectionDto] })
  collections!: RestoredCollectionDto[];
  @ApiProperty({ description: 'Files restored (media, attachments, files)' })
  files!: number;
  @ApiProperty()
  bytes!: number;
}

@ApiTags('backup')
@ApiCookieAuth()
@Controller('backup')
export class BackupController {
  constructor(private readonly backups: BackupService) {}

  @Get()
  @ApiOperation({
    summary: 'Download a backup of everything',
    description:
      'One .tar.gz: manifest.json, every collection (canonical Extended JSON, one document a line) including the settings with their API keys in clear, media, attachments and DATA_DIR/files. Not in it: the owner password and sessions (auth_*), the WhatsApp link. Keep it as safe as the keys it holds.',
  })
  @ApiProduces('application/gzip')
  @ApiOkResponse({ description: 'The archive (streamed)' })
  @ApiConflictResponse({ description: 'A backup or restore is running' })
  async download(@Res() res: Response): Promise<void> {
    const backup = await this.backups.create();
    res.on('close', () => void backup.release());
    res.setHeader('Content-Type', 'application/gzip');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader(
      'Content-Disposition',
      contentDisposition('attachment', backup.fileName),
    );
    backup.stream.on('error', () => res.destroy());
    backup.stream.pipe(res);
  }

  @Post('restore')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Restore a backup',
    description:
      'The archive of GET /api/backup as the raw body (application/gzip or application/octet-stream) or in a multipart field `file`. The whole archive is unpacked and checked before anything changes; then every collection in it replaces the one here, and media, attachments and files are swapped. The owner password and sessions of this instance stay. Refused with 409 when this instance already has chats, unless `?replace=true`.',
  })
  @ApiConsumes(
    'application/gzip',
    'application/octet-stream',
    'multipart/form-data',
  )
  @ApiBody({
    schema: {
      type: 'object',
      properties: { file: { type: 'string', format: 'binary' } },
    },
  })
  @ApiOkResponse({ type: RestoreResultDto })
  @ApiBadRequestResponse({
    description:
      'Not a MetatronOS backup, damaged or truncated, or an entry that is a link, absolute or leaves the archive (`..`): nothing changed',
  })
  @ApiPayloadTooLargeResponse({
    description: 'Over the archive or unpacked size limit: nothing changed',
  })
  @ApiConflictResponse({
    description:
      'This instance already has chats (send ?replace=true), or a backup or restore is running',
  })
  restore(
    @Req() req: Request,
    @Query() query: RestoreQueryDto,
  ): Promise<RestoreResult> {
    return this.backups.restore(req, query.replace === 'true');
  }
}
