import { Logger, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { BaileysSocketFactory } from './baileys-socket.factory';
import { ModuleSocketFactory } from './module-socket.factory';
import {
  WhatsAppController,
  WhatsAppStreamSettings,
} from './whatsapp.controller';
import { WhatsAppGateway } from './whatsapp-gateway';
import { WhatsAppMessageStore } from './whatsapp-message.store';
import { ReplaceableSocketFactory } from './replaceable-socket.factory';
import { WhatsAppSocketFactory } from './whatsapp-socket';
import { WhatsAppService } from './whatsapp.service';
import {
  WhatsAppMessageRecord,
  WhatsAppMessageSchema,
} from './schemas/whatsapp-message.schema';

/**
 * Test-only: a stand-in for the whole link (given as `AppModule.forRoot({ whatsappGateway })`).
 * When present, `WhatsAppGateway` is this instead of `WhatsAppService`.
 */
export const WHATSAPP_GATEWAY_STAND_IN = Symbol('WHATSAPP_GATEWAY_STAND_IN');

/** Baileys, unless the operator named a socket module (`WHATSAPP_SOCKET_MODULE`, the browser tests' fake). */
function socketFactory(
  baileys: BaileysSocketFactory,
  config: AppConfig,
): ReplaceableSocketFactory {
  const path = config.whatsappSocketModule;
  if (!path) return new ReplaceableSocketFactory(baileys);
  new Logger('WhatsApp').warn(
    `A custom WhatsApp socket module is in use instead of Baileys (WHATSAPP_SOCKET_MODULE=${path})`,
  );
  return new ReplaceableSocketFactory(new ModuleSocketFactory(path));
}

/**
 * The WhatsApp link: the Baileys socket (through `WhatsAppSocketFactory`), its
 * status lifecycle and events, `whatsapp_messages`, and `/api/whatsapp`.
 * Other modules import this one and use `WhatsAppGateway`.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: WhatsAppMessageRecord.name, schema: WhatsAppMessageSchema },
    ]),
  ],
  controllers: [WhatsAppController],
  providers: [
    BaileysSocketFactory,
    {
      provide: WhatsAppSocketFactory,
      useFactory: socketFactory,
      inject: [BaileysSocketFactory, APP_CONFIG],
    },
    WhatsAppMessageStore,
    WhatsAppService,
    {
      provide: WhatsAppGateway,
      useFactory: (service: WhatsAppService, standIn?: WhatsAppGateway) =>
        standIn ?? service,
      inject: [
        WhatsAppService,
        { token: WHATSAPP_GATEWAY_STAND_IN, optional: true },
      ],
    },
    WhatsAppStreamSettings,
  ],
  exports: [WhatsAppGateway, WhatsAppService, WhatsAppMessageStore],
})
export class WhatsAppModule {}
