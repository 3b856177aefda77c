import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { WhatsAppModule } from '../whatsapp/gateway/whatsapp.module';
import { WhatsAppLink } from '../whatsapp/permissions/whatsapp-link';
import { WhatsAppPermissionsModule } from '../whatsapp/permissions/whatsapp-permissions.module';
import { ContactChannelRouter } from './contact-channel';
import { ContactsMode, ContactsSendTool } from './contacts-send.tool';
import { WhatsAppContactChannel } from './whatsapp-contact-channel';

/**
 * `contacts_send` and the `contacts` mode: one tool for every messaging channel,
 * routed by the contact id's prefix (`wa:` WhatsApp; Telegram adds `tg:` with a
 * `@ContactChannelProvider()` of its own).
 */
@Module({
  imports: [DiscoveryModule, WhatsAppModule, WhatsAppPermissionsModule],
  providers: [
    ContactChannelRouter,
    WhatsAppLink,
    WhatsAppContactChannel,
    ContactsMode,
    ContactsSendTool,
  ],
})
export class ContactsModule {}
