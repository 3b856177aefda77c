import { Module } from '@nestjs/common';
import { ChatsModule } from '../../chats/chats.module';
import { WhatsAppModule } from '../gateway/whatsapp.module';
import { WhatsAppPermissionsModule } from '../permissions/whatsapp-permissions.module';
import { WhatsAppAutoReplyService } from './whatsapp-auto-reply.service';
import { SandboxReadScope } from '../../mongo-sandbox/sandbox-collection-owners';
import { WhatsAppAutoReplySettings } from './whatsapp-auto-reply.settings';
import { WhatsAppChatsReadScope } from './whatsapp-chats-read-scope';

/**
 * Answers WhatsApp messages in the background: listens to `whatsapp.message`,
 * runs a restricted turn in the contact's chat, and sends the answer back
 * through `WhatsAppGateway` when the contact has `canReply`.
 */
@Module({
  imports: [ChatsModule, WhatsAppModule, WhatsAppPermissionsModule],
  providers: [
    WhatsAppAutoReplySettings,
    WhatsAppAutoReplyService,
    // db_query sees a contact's auto-reply conversation only with canRead.
    { provide: SandboxReadScope, useClass: WhatsAppChatsReadScope },
  ],
  exports: [WhatsAppAutoReplyService, WhatsAppAutoReplySettings],
})
export class WhatsAppAutoReplyModule {}
