import {
  Controller,
  Get,
  NotFoundException,
  Param,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { FileHandle } from 'node:fs/promises';
import type { MediaInfo } from '@metatronos/shared-types';
import { EXTENSION_BY_MIME } from './image-info';
import { MediaStore, toMediaInfo, type StoredMedia } from './media.store';

/** A year: the bytes behind an id never change (the id names one record, the record one hash). */
const CACHE_CONTROL = 'private, max-age=31536000, immutable';

@ApiTags('media')
@Controller('media')
export class MediaController {
  constructor(private readonly store: MediaStore) {}

  @Get(':id/info')
  @ApiOperation({
    summary: 'What is known about a stored image (prompt, model, size…)',
  })
  @ApiOkResponse({ description: 'The media record' })
  @ApiNotFoundResponse({ description: 'Unknown id' })
  async info(@Param('id') id: string): Promise<MediaInfo> {
    return toMediaInfo(await this.found(id));
  }

  @Get(':id')
  @ApiOperation({ summary: 'The image file of a generated or edited image' })
  @ApiProduces('image/png', 'image/jpeg', 'image/webp')
  @ApiOkResponse({
    description: 'The image bytes (304 when If-None-Match holds its ETag)',
  })
  @ApiNotFoundResponse({ description: 'Unknown id, or its file is missing' })
  async file(
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const record = await this.found(id);
    const handle = await this.store.open(record);
    if (!handle)
      throw new NotFoundException(`The file of image ${id} is missing`);
    let streaming = false;
    try {
      const { size } = await handle.stat();
      streaming = await this.send(record, size, handle, req, res);
    } finally {
      if (!streaming) await handle.close();
    }
  }

  /** Answers with the opened file; true when its stream took the handle over. */
  private async send(
    record: StoredMedia,
    size: number,
    handle: FileHandle,
    req: Request,
    res: Response,
  ): Promise<boolean> {
    const etag = `"${record.sha256}"`;
    res.setHeader('Cache-Control', CACHE_CONTROL);
    res.setHeader('ETag', etag);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (matchesEtag(req.headers['if-none-match'], record.sha256)) {
      res.status(304).end();
      return false;
    }
    res.status(200);
    res.setHeader('Content-Type', record.mime);
    res.setHeader('Content-Length', String(size));
    res.setHeader(
      'Content-Disposition',
      `inline; filename="${downloadName(record)}"`,
    );
    if (req.method === 'HEAD') {
      res.end();
      return false;
    }
    await new Promise<void>((resolve) => {
      const stream = handle.createReadStream({ start: 0 });
      stream.on('error', () => {
        res.destroy();
        resolve();
      });
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res);
    });
    return true;
  }

  private async found(id: string): Promise<StoredMedia> {
    const record = await this.store.find(id);
    if (!record)
      throw new NotFoundException(
        `No image with id ${String(id).slice(0, 40)}`,
      );
    return record;
  }
}

/** `If-None-Match: "<sha>"`, `W/"<sha>"`, a list of them, or `*`. */
function matchesEtag(
  header: string | string[] | undefined,
  sha256: string,
): boolean {
  if (!header) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  return value
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, ''))
    .some((tag) => tag === '*' || tag === sha256);
}

/** A safe ASCII file name from the short description: `sunset-over-the-sea.png`. */
export function downloadName(
  record: Pick<StoredMedia, 'shortDescription' | 'mime'>,
): string {
  const base = (record.shortDescription ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60)
    .replace(/[-.]+$/, '');
  return `${base || 'image'}.${EXTENSION_BY_MIME[record.mime] ?? 'png'}`;
}
