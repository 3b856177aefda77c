import { Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { ChatsService } from '../../chats/chats.service';
import type { MongoDocument } from '../../mongo-sandbox/mongo-operation';
import { SandboxReadScope } from '../../mongo-sandbox/sandbox-collection-owners';
import { WhatsAppPermissionsService } from '../permissions/whatsapp-permissions.service';

/**
 * The auto-reply keeps each contact's conversation in a chat of its own, so
 * `messages` holds copies of WhatsApp messages too: db_query sees those of a
 * WhatsApp chat only while its contact has canRead (as `whatsapp_messages`).
 */
@Injectable()
export class WhatsAppChatsReadScope extends SandboxReadScope {
  readonly collection = 'messages';

  constructor(
    private readonly chats: ChatsService,
    private readonly permissions: WhatsAppPermissionsService,
  ) {
    super();
  }

  async visibleFilter(): Promise<MongoDocument> {
    const [chats, permissions] = await Promise.all([
      this.chats.list(),
      this.permissions.list(),
    ]);
    const readable = new Set(
      permissions.filter((p) => p.canRead && p.chatId).map((p) => p.chatId),
    );
    const hidden = chats
      .filter((chat) => chat.kind === 'whatsapp' && !readable.has(chat.id))
      .map((chat) => new Types.ObjectId(chat.id));
    return { chatId: { $nin: hidden } };
  }
}
