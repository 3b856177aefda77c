import { Injectable } from '@nestjs/common';
import {
  ContactChatDirectoryProvider,
  type ContactChatDirectory,
} from '../channels/contact-chats-read-scope';
import { TelegramPermissionsService } from './telegram-permissions.service';

/** The Telegram console chats db_query may read: those whose chat has canRead. */
@ContactChatDirectoryProvider()
@Injectable()
export class TelegramChatDirectory implements ContactChatDirectory {
  readonly channel = 'telegram' as const;

  constructor(private readonly permissions: TelegramPermissionsService) {}

  async readableChatIds(): Promise<ReadonlySet<string>> {
    return new Set(
      (await this.permissions.list())
        .filter((p) => p.canRead && p.consoleChatId)
        .map((p) => p.consoleChatId as string),
    );
  }
}
