import { Injectable } from '@nestjs/common';
import type { MongoDocument } from '../mongo-sandbox/mongo-operation';
import { SandboxReadScope } from '../mongo-sandbox/sandbox-collection-owners';
import { TELEGRAM_MESSAGES_COLLECTION } from './schemas/telegram-message.schema';
import { TelegramPermissionsService } from './telegram-permissions.service';

/** What db_query may read of `telegram_messages`: the messages of chats with canRead (strangers' stay invisible). */
@Injectable()
export class TelegramMessagesReadScope extends SandboxReadScope {
  readonly collection = TELEGRAM_MESSAGES_COLLECTION;

  constructor(private readonly permissions: TelegramPermissionsService) {
    super();
  }

  async visibleFilter(): Promise<MongoDocument> {
    return {
      telegramChatId: { $in: await this.permissions.readableChatIds() },
    };
  }
}
