import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Types } from 'mongoose';
import {
  CONTACT_CHANNELS,
  type ContactChannel,
} from '@metatronos/shared-types';
import { ChatsService } from '../chats/chats.service';
import type { MongoDocument } from '../mongo-sandbox/mongo-operation';
import { SandboxReadScope } from '../mongo-sandbox/sandbox-collection-owners';

/** What a channel tells the scope: the console chats of its contacts that still have canRead. */
export interface ContactChatDirectory {
  readonly channel: ContactChannel;
  readableChatIds(): Promise<ReadonlySet<string>>;
}

/** Marks a channel's `ContactChatDirectory` provider. */
export const ContactChatDirectoryProvider =
  DiscoveryService.createDecorator<void>();

/**
 * The auto-reply keeps each contact's conversation in a chat of its own, so
 * `messages` holds copies of channel messages too: db_query sees those of a
 * contact chat (any channel) only while its contact has canRead. A contact chat
 * of a channel that is not loaded is hidden.
 */
@Injectable()
export class ContactChatsReadScope extends SandboxReadScope {
  readonly collection = 'messages';

  constructor(
    private readonly chats: ChatsService,
    private readonly discovery: DiscoveryService,
  ) {
    super();
  }

  async visibleFilter(): Promise<MongoDocument> {
    const directories = this.discovery
      .getProviders({ metadataKey: ContactChatDirectoryProvider.KEY })
      .map((wrapper) => wrapper.instance as ContactChatDirectory | undefined)
      .filter((d): d is ContactChatDirectory => !!d?.readableChatIds);
    // Both views: an archived contact chat is still a contact's words (the lists are in memory, no read).
    const [active, archived, ...readable] = await Promise.all([
      this.chats.list(),
      this.chats.list({ archived: true }),
      ...directories.map((d) => d.readableChatIds()),
    ]);
    const chats = [...active, ...archived];
    const byChannel = new Map(
      directories.map((d, i) => [d.channel as string, readable[i]]),
    );
    const hidden = chats
      .filter(
        (chat) =>
          (CONTACT_CHANNELS as readonly string[]).includes(chat.kind) &&
          !byChannel.get(chat.kind)?.has(chat.id),
      )
      .map((chat) => new Types.ObjectId(chat.id));
    return { chatId: { $nin: hidden } };
  }
}
