import { BudgetModule } from '../../budget/budget.module';
import { Module } from '@nestjs/common';
import { ChatsModule } from '../../chats/chats.module';
import { WhatsAppModule } from '../gateway/whatsapp.module';
import { WhatsAppPermissionsModule } from '../permissions/whatsapp-permissions.module';
import { WhatsAppAutoReplyService } from './whatsapp-auto-reply.service';
import { WhatsAppAutoReplySettings } from './whatsapp-auto-reply.settings';
import { WhatsAppChatDirectory } from './whatsapp-chat-directory';

/**
 * Answers WhatsApp messages in the background: listens to `whatsapp.message`,
 * runs a restricted turn in the contact's chat, and sends the answer back
 * through `WhatsAppGateway` when the contact has `canReply`.
 */
@Module({
  imports: [
    ChatsModule,
    WhatsAppModule,
    WhatsAppPermissionsModule,
    BudgetModule,
  ],
  providers: [
    WhatsAppAutoReplySettings,
    WhatsAppAutoReplyService,
    // db_query sees a contact's auto-reply conversation only with canRead.
    WhatsAppChatDirectory,
  ],
  exports: [WhatsAppAutoReplyService, WhatsAppAutoReplySettings],
})
export class WhatsAppAutoReplyModule {}
