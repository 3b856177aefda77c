import {
  Controller,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProperty,
  ApiTags,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { UploadedAttachment } from '@metatronos/shared-types';
import { AttachmentsService } from './attachments.service';
import { ALLOWED_TYPES_TEXT } from './attachment-type';

class UploadedAttachmentDto implements UploadedAttachment {
  @ApiProperty()
  id!: string;
  @ApiProperty({
    description: "The client's file name, sanitised (display text only)",
  })
  name!: string;
  @ApiProperty({ description: 'Decided from the content and the extension' })
  mime!: string;
  @ApiProperty({ description: 'Bytes' })
  size!: number;
}

/** `filename="…"` for old clients (ASCII only) and `filename*=` with the real name. */
export function contentDisposition(
  type: 'inline' | 'attachment',
  name: string,
): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

@ApiTags('attachments')
@Controller('attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Upload a file to send with a message',
    description: `Multipart with one field \`file\`. Accepted: ${ALLOWED_TYPES_TEXT}, up to ATTACHMENT_MAX_MB. The id goes into \`attachmentIds\` of the next message.`,
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' } },
    },
  })
  @ApiCreatedResponse({ type: UploadedAttachmentDto })
  @ApiBadRequestResponse({
    description:
      'Not multipart, no `file` field, more than one file, or an empty file',
  })
  @ApiPayloadTooLargeResponse({
    description: 'Larger than ATTACHMENT_MAX_MB; nothing is kept',
  })
  @ApiUnsupportedMediaTypeResponse({
    description:
      'A type that is not accepted (checked on the content, not only the name)',
  })
  upload(@Req() req: Request): Promise<UploadedAttachment> {
    return this.attachments.upload(req);
  }

  @Get(':id')
  @ApiOperation({ summary: 'The file of an attachment' })
  @ApiOkResponse({ description: 'The bytes, with their type' })
  @ApiNotFoundResponse({ description: 'No such attachment' })
  async download(
    @Param('id') id: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.attachments.download(id);
    const { record } = file;
    const etag = `"${record.sha256}"`;
    res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
    res.setHeader('ETag', etag);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // The file is shown, never run: no scripts, no plugins, whatever a viewer makes of it.
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
    );
    if (ifNoneMatch?.split(',').some((tag) => tag.trim() === etag)) {
      await file.close();
      res.status(304).end();
      return;
    }
    res.setHeader(
      'Content-Type',
      record.kind === 'text' ? `${record.mime}; charset=utf-8` : record.mime,
    );
    res.setHeader('Content-Length', String(file.size));
    res.setHeader(
      'Content-Disposition',
      contentDisposition(
        record.kind === 'image' ? 'inline' : 'attachment',
        record.name,
      ),
    );
    const stream = file.stream();
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }
}
