import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { CONTACT_CHANNELS } from '@metatronos/shared-types';
import {
  ContactChatDirectoryProvider,
  type ContactChatDirectory,
} from '../channels/contact-chats-read-scope';
import { MemoryIndex } from './memory-index';

/**
 * Which chats memory search may show: the owner's chats, jobs and Pulse always; a
 * contact's chat only while that contact has read permission (the same directories
 * db_query's read scope asks); a chat of a channel that is not loaded, never.
 * Read fresh for each search, so a revoked permission hides the chat at once.
 */
@Injectable()
export class VisibleChats {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly index: MemoryIndex,
  ) {}

  async predicate(): Promise<(chatId: string) => boolean> {
    const directories = this.discovery
      .getProviders({ metadataKey: ContactChatDirectoryProvider.KEY })
      .map((wrapper) => wrapper.instance as ContactChatDirectory | undefined)
      .filter((d): d is ContactChatDirectory => !!d?.readableChatIds);
    const readable = await Promise.all(
      directories.map((d) => d.readableChatIds()),
    );
    const byChannel = new Map<string, ReadonlySet<string>>(
      directories.map((d, i) => [d.channel, readable[i]]),
    );
    return (chatId) => {
      const kind = this.index.kindOf(chatId);
      if (!kind) return false;
      if (!(CONTACT_CHANNELS as readonly string[]).includes(kind)) return true;
      return byChannel.get(kind)?.has(chatId) ?? false;
    };
  }
}
