import {
  Body,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCookieAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { filter } from 'rxjs';
import { WHATSAPP_MESSAGES_DEFAULT_LIMIT } from '@metatronos/shared-types';
import { AppEventBus, type AppEvent } from '../../events/app-event-bus';
import {
  WhatsAppConnectResultDto,
  WhatsAppDisconnectDto,
  WhatsAppDisconnectResultDto,
  WhatsAppMessagesDto,
  WhatsAppMessagesQueryDto,
  WhatsAppQrDto,
  WhatsAppStatusDto,
} from './dto/whatsapp.dto';
import { WhatsAppService } from './whatsapp.service';

export const NO_QR_MESSAGE = 'No QR code available';

/** Timing of the QR stream; a provider so tests can shorten the keep-alive. */
export class WhatsAppStreamSettings {
  keepAliveMs = 30_000;
}

@ApiTags('whatsapp')
@ApiCookieAuth()
@ApiUnauthorizedResponse({ description: 'No owner session' })
@Controller('whatsapp')
export class WhatsAppController {
  constructor(
    private readonly whatsapp: WhatsAppService,
    private readonly events: AppEventBus,
    private readonly stream: WhatsAppStreamSettings,
  ) {}

  @Get('status')
  @ApiOperation({ summary: 'Connection status of the WhatsApp link' })
  @ApiOkResponse({ type: WhatsAppStatusDto })
  status(): WhatsAppStatusDto {
    return this.whatsapp.view();
  }

  @Post('connect')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start linking or reconnecting (fire-and-forget)',
    description:
      'Returns at once; follow `GET /api/whatsapp/qr/stream` for the QR code and status changes.',
  })
  @ApiOkResponse({ type: WhatsAppConnectResultDto })
  connect(): WhatsAppConnectResultDto {
    return this.whatsapp.connect();
  }

  @Get('qr')
  @ApiOperation({ summary: 'The current QR code as a PNG data URL' })
  @ApiOkResponse({ type: WhatsAppQrDto })
  @ApiNotFoundResponse({ description: NO_QR_MESSAGE })
  qr(): WhatsAppQrDto {
    const qr = this.whatsapp.qrDataUrl;
    if (!qr) throw new NotFoundException(NO_QR_MESSAGE);
    return { qr };
  }

  @Get('qr/stream')
  @ApiOperation({
    summary: 'Server-sent events of the linking flow',
    description:
      'Events: `status` `{status, phoneNumber, reason, problem, reconnectAt}` (at once and on every change), `qr` `{qr}` (at once when one is available and on every new code), ' +
      '`connected` `{phoneNumber}`. A `: keep-alive` comment every 30 s. When the server stops, `shutdown` `{at}` is the last event and the stream ends.',
  })
  @ApiProduces('text/event-stream')
  qrStream(@Req() req: Request, @Res() res: Response): void {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const send = (event: string, data: unknown) => {
      if (!res.writableEnded)
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };

    // The seed's `{ status, phoneNumber }`, plus why the link is retrying or stopped (the console words it).
    const statusEvent = () => {
      const { status, phoneNumber, reason, problem, reconnectAt } =
        this.whatsapp.view();
      return { status, phoneNumber, reason, problem, reconnectAt };
    };
    send('status', statusEvent());
    if (this.whatsapp.qrDataUrl) send('qr', { qr: this.whatsapp.qrDataUrl });
    const subscription = this.events
      .stream()
      .pipe(
        filter(
          (event) =>
            event.name === 'whatsapp.status' ||
            event.name === 'whatsapp.qr' ||
            event.name === 'shutdown',
        ),
      )
      .subscribe((event: AppEvent) => {
        if (event.name === 'shutdown') {
          send('shutdown', event.payload);
          res.end();
          return;
        }
        if (event.name === 'whatsapp.qr') {
          send('qr', { qr: (event as AppEvent<'whatsapp.qr'>).payload.qr });
          return;
        }
        const { status, phoneNumber } = (event as AppEvent<'whatsapp.status'>)
          .payload;
        send('status', {
          ...statusEvent(),
          status,
          phoneNumber,
        });
        if (status === 'connected') send('connected', { phoneNumber });
      });
    const keepAlive = setInterval(
      () => !res.writableEnded && res.write(': keep-alive\n\n'),
      this.stream.keepAliveMs,
    );
    const cleanup = () => {
      clearInterval(keepAlive);
      subscription.unsubscribe();
    };
    req.on('close', cleanup);
    res.on('close', cleanup);
  }

  @Post('disconnect')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Disconnect; with `clearSession` also log the device out and delete the saved session',
  })
  @ApiOkResponse({ type: WhatsAppDisconnectResultDto })
  @ApiBadRequestResponse({ description: 'clearSession is not a boolean' })
  async disconnect(
    @Body() body: WhatsAppDisconnectDto,
  ): Promise<WhatsAppDisconnectResultDto> {
    await this.whatsapp.disconnect(body.clearSession ?? false);
    return { status: 'disconnected' };
  }

  @Get('messages')
  @ApiOperation({
    summary: 'Recent WhatsApp messages, oldest first (default 50, at most 100)',
  })
  @ApiOkResponse({ type: WhatsAppMessagesDto })
  @ApiBadRequestResponse({
    description: 'limit is not a positive whole number',
  })
  async messages(
    @Query() query: WhatsAppMessagesQueryDto,
  ): Promise<WhatsAppMessagesDto> {
    const messages = await this.whatsapp.getMessages({
      contact: query.contact,
      limit: query.limit ?? WHATSAPP_MESSAGES_DEFAULT_LIMIT,
    });
    return { messages };
  }
}
