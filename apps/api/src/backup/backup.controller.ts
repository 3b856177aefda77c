import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Headers,
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
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { Request, Response } from 'express';
import type { RestoreResult } from '@metatronos/shared-types';
import { contentDisposition } from '../attachments/attachments.controller';
import { MIN_PASSPHRASE_LENGTH } from './backup-secrets';
import { BackupService } from './backup.service';
import { OptionalField } from '../http/optional-field';

const PASSPHRASE_HELP =
  "Seals the settings' secrets (API keys, the Telegram token, endpoint keys, auth profile values) into the archive with scrypt and AES-256-GCM. Without one the archive holds no secrets.";

/** `passphrase` for a backup: in the JSON body of POST /api/backup or the query of GET /api/backup. */
export class BackupRequestDto {
  @ApiPropertyOptional({
    description: `${PASSPHRASE_HELP} At least ${MIN_PASSPHRASE_LENGTH} characters; empty means none.`,
    maxLength: 1024,
  })
  @OptionalField()
  @IsString()
  @MaxLength(1024)
  passphrase?: string;
}

/** A passphrase given as empty is no passphrase; a short one is refused rather than silently weak. */
function backupPassphrase(
  ...given: Array<string | undefined>
): string | undefined {
  const passphrase = given.find((p) => typeof p === 'string' && p !== '');
  if (
    passphrase !== undefined &&
    [...passphrase].length < MIN_PASSPHRASE_LENGTH
  )
    throw new BadRequestException(
      `passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters (or leave it out: the backup then holds no secrets)`,
    );
  return passphrase;
}

export class RestoreQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      'Restore over an instance that already has chats, replacing all its data (otherwise 409)',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  replace?: 'true' | 'false';

  @ApiPropertyOptional({
    description:
      'Opens the secrets of a backup made with a passphrase (also as the header X-Backup-Passphrase or the multipart field `passphrase`). Without it the secrets of this instance are kept.',
    maxLength: 1024,
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  passphrase?: string;
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
  @ApiPropertyOptional({
    enum: ['restored', 'kept'],
    description:
      "`restored`: the backup's secrets are in use; `kept`: it held none (or no passphrase was given), so this instance's were kept",
  })
  secrets?: 'restored' | 'kept';
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
      "One .tar.gz: manifest.json, every collection (canonical Extended JSON, one document a line), media, attachments and DATA_DIR/files. The settings' secrets (API keys, the Telegram token, endpoint keys, auth profile values) and MCP servers' header and environment values are left out, or sealed with `passphrase` (prefer POST /api/backup with a JSON body, so the passphrase is not in a URL). Never in it: the owner password and sessions, account passwords (auth_*), MCP sign-ins (mcp_oauth), the WhatsApp link.",
  })
  @ApiHeader({
    name: 'X-Backup-Passphrase',
    required: false,
    description: PASSPHRASE_HELP,
  })
  @ApiProduces('application/gzip')
  @ApiOkResponse({ description: 'The archive (streamed)' })
  @ApiBadRequestResponse({ description: 'A passphrase under 8 characters' })
  @ApiConflictResponse({ description: 'A backup or restore is running' })
  async download(
    @Res() res: Response,
    @Query() query: BackupRequestDto,
    @Headers('x-backup-passphrase') header?: string,
  ): Promise<void> {
    await this.send(res, backupPassphrase(header, query.passphrase));
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Download a backup, its secrets sealed with a passphrase',
    description:
      'The archive of GET /api/backup; `passphrase` in the JSON body seals the secrets into it (scrypt, AES-256-GCM). Without one the archive holds no secrets.',
  })
  @ApiProduces('application/gzip')
  @ApiOkResponse({ description: 'The archive (streamed)' })
  @ApiBadRequestResponse({ description: 'A passphrase under 8 characters' })
  @ApiConflictResponse({ description: 'A backup or restore is running' })
  async downloadSealed(
    @Res() res: Response,
    @Body() body: BackupRequestDto,
  ): Promise<void> {
    await this.send(res, backupPassphrase(body.passphrase));
  }

  private async send(res: Response, passphrase?: string): Promise<void> {
    const backup = await this.backups.create(passphrase);
    // 'finish': the last byte is handed to the OS, so the next backup is not refused while the client reads it.
    res.on('finish', () => void backup.release());
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
      "The archive of GET /api/backup as the raw body (application/gzip or application/octet-stream) or in a multipart field `file`. The whole archive is unpacked and every document checked against the app's schemas and unique keys before anything changes (a 400 names the collection, document and field); the data is written beside the live data and switched in under a journal, so a crash leaves the previous or the new data whole. Secrets: a backup made with a passphrase needs it (`passphrase` in the query, the header X-Backup-Passphrase or a multipart field) to restore its secrets; otherwise this instance's secrets are kept. The owner password and sessions of this instance stay. Refused with 409 when this instance already has chats, unless `?replace=true`.",
  })
  @ApiConsumes(
    'application/gzip',
    'application/octet-stream',
    'multipart/form-data',
  )
  @ApiBody({
    schema: {
      type: 'object',
      properties: {
        file: { type: 'string', format: 'binary' },
        passphrase: { type: 'string' },
      },
    },
  })
  @ApiOkResponse({ type: RestoreResultDto })
  @ApiBadRequestResponse({
    description:
      "Not a MetatronOS backup, damaged or truncated, an entry that is a link, absolute or leaves the archive (`..`), a document that does not fit the app's schema or repeats a unique key, malformed multipart, or a wrong passphrase: nothing changed",
  })
  @ApiPayloadTooLargeResponse({
    description: 'Over the archive or unpacked size limit: nothing changed',
  })
  @ApiConflictResponse({
    description:
      'This instance already has chats (send ?replace=true), or a backup or restore is running',
  })
  @ApiHeader({
    name: 'X-Backup-Passphrase',
    required: false,
    description: "Opens the backup's sealed secrets",
  })
  restore(
    @Req() req: Request,
    @Query() query: RestoreQueryDto,
    @Headers('x-backup-passphrase') header?: string,
  ): Promise<RestoreResult> {
    return this.backups.restore(
      req,
      query.replace === 'true',
      header || query.passphrase || undefined,
    );
  }
}
