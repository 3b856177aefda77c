import { Controller, Get, Query } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Connection } from 'mongoose';
import type { WhatsAppInboundMessage } from '@metatronos/shared-types';
import type { InboundMessage } from '../../channels/contact-auto-reply';
import {
  WhatsAppInboundMessageDto,
  WhatsAppInboundQueryDto,
} from './dto/whatsapp-permission.dto';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';

/** The auto-reply's view of a stored WhatsApp message (see WhatsAppMessageRecord). */
interface StoredInbound extends InboundMessage {
  phone: string;
  fromName: string | null;
  reason?: string | null;
}

/**
 * `GET /api/whatsapp/inbound`: what people sent to the linked number, strangers included, with
 * the auto-reply's state and answer: the same list the Telegram card shows, so both channels
 * offer "Allow" to an unknown sender the same way.
 */
@ApiTags('whatsapp')
@Controller('whatsapp')
export class WhatsAppInboundController {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly permissions: WhatsAppPermissionsService,
  ) {}

  @Get('inbound')
  @ApiOperation({
    summary:
      'The latest messages people sent (not own, not group), newest first, strangers included (they get no reply until allowed)',
  })
  @ApiOkResponse({ type: [WhatsAppInboundMessageDto] })
  @ApiBadRequestResponse({ description: 'limit is not a whole number 1–200' })
  async inbound(
    @Query() query: WhatsAppInboundQueryDto,
  ): Promise<WhatsAppInboundMessage[]> {
    const docs = await this.connection
      .collection<StoredInbound>('whatsapp_messages')
      .find({ fromMe: false, isGroup: false })
      .sort({ timestamp: -1 })
      .limit(query.limit ?? 50)
      .toArray();
    const readable = new Set(await this.permissions.readablePhones());
    return docs.map((doc) => ({
      id: doc._id,
      phone: doc.phone,
      fromName: doc.fromName ?? null,
      text: doc.body,
      at: new Date(doc.timestamp).toISOString(),
      processing: doc.processing,
      reason: doc.reason ?? null,
      permitted: readable.has(doc.phone),
      reply: doc.replyText ?? null,
    }));
  }
}
