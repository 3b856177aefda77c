import { Injectable } from '@nestjs/common';
import { WhatsAppLink } from '../whatsapp/permissions/whatsapp-link';
import { WhatsAppPermissionsService } from '../whatsapp/permissions/whatsapp-permissions.service';
import { WHATSAPP_SEND_MAX_LENGTH } from '../whatsapp/permissions/whatsapp-tools';
import {
  ContactChannelProvider,
  ContactSendError,
  type ContactChannel,
} from './contact-channel';

/** `wa:<digits>`: through the WhatsApp link, only to contacts with reply permission (canReply). */
@ContactChannelProvider()
@Injectable()
export class WhatsAppContactChannel implements ContactChannel {
  readonly prefix = 'wa';
  readonly label = 'WhatsApp';
  readonly idExample = 'wa:<digits>';

  constructor(
    private readonly link: WhatsAppLink,
    private readonly permissions: WhatsAppPermissionsService,
  ) {}

  get connected(): boolean {
    return this.link.connected;
  }

  parseAddress(raw: string): string | null {
    // Digits only: a JID, a group or a "+" would be another kind of target.
    return /^\d{7,15}$/.test(raw) ? raw : null;
  }

  async send(phone: string, text: string): Promise<{ to: string }> {
    if (text.length > WHATSAPP_SEND_MAX_LENGTH)
      throw new ContactSendError(
        `message_text is too long for WhatsApp (${text.length} characters; at most ${WHATSAPP_SEND_MAX_LENGTH})`,
      );
    if (!this.link.connected)
      throw new ContactSendError('WhatsApp is not connected');
    const permission = await this.permissions.findByPhone(phone);
    if (!permission?.canReply)
      throw new ContactSendError(
        `No reply permission for wa:${phone}: the owner has not allowed you to message this contact`,
      );
    const sent = await this.link.use().sendText(phone, text);
    return { to: sent.jid };
  }
}
