import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { BaileysSocketFactory } from './baileys-socket.factory';
import { WhatsAppController, WhatsAppStreamSettings } from './whatsapp.controller';
import { WhatsAppGateway } from './whatsapp-gateway';
import { WhatsAppMessageStore } from './whatsapp-message.store';
import { ReplaceableSocketFactory } from './replaceable-socket.factory';
import { WhatsAppSocketFactory } from './whatsapp-socket';
import { WhatsAppService } from './whatsapp.service';
import { WhatsAppMessageRecord, WhatsAppMessageSchema } from './schemas/whatsapp-message.schema';

/**
 * The WhatsApp link: the Baileys socket (through `WhatsAppSocketFactory`), its
 * status lifecycle and events, `whatsapp_messages`, and `/api/whatsapp`.
 * Other modules use `WhatsAppGateway`.
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: WhatsAppMessageRecord.name, schema: WhatsAppMessageSchema }])],
  controllers: [WhatsAppController],
  providers: [
    BaileysSocketFactory,
    { provide: WhatsAppSocketFactory, useFactory: (baileys: BaileysSocketFactory) => new ReplaceableSocketFactory(baileys), inject: [BaileysSocketFactory] },
    WhatsAppMessageStore,
    WhatsAppService,
    { provide: WhatsAppGateway, useExisting: WhatsAppService },
    WhatsAppStreamSettings,
  ],
  exports: [WhatsAppGateway, WhatsAppService, WhatsAppMessageStore],
})
export class WhatsAppModule {}
