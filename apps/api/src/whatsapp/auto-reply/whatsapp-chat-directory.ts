import { Injectable } from '@nestjs/common';
import {
  ContactChatDirectoryProvider,
  type ContactChatDirectory,
} from '../../channels/contact-chats-read-scope';
import { WhatsAppPermissionsService } from '../permissions/whatsapp-permissions.service';

/** The WhatsApp contact chats db_query may read: those whose contact has canRead. */
@ContactChatDirectoryProvider()
@Injectable()
export class WhatsAppChatDirectory implements ContactChatDirectory {
  readonly channel = 'whatsapp' as const;

  constructor(private readonly permissions: WhatsAppPermissionsService) {}

  async readableChatIds(): Promise<ReadonlySet<string>> {
    return new Set(
      (await this.permissions.list())
        .filter((p) => p.canRead && p.chatId)
        .map((p) => p.chatId as string),
    );
  }
}
