import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/** A refusal a channel explains in plain words (no permission, not connected…). */
export class ContactSendError extends Error {}

/**
 * One messaging channel `contacts_send` can reach, named by the prefix of a
 * contact id (`wa:14155551234`, later `tg:123456789`). A channel module marks
 * its implementation with `@ContactChannelProvider()`; the router finds it, so
 * adding Telegram never edits the tool.
 */
export interface ContactChannel {
  /** The id prefix before `:` (lower case letters). */
  readonly prefix: string;
  /** For messages: "WhatsApp". */
  readonly label: string;
  /** What an address looks like, for errors: "wa:<digits>". */
  readonly idExample: string;
  /** Whether the channel can send now (linked, connected). */
  readonly connected: boolean;
  /** The address in canonical form, or null when it cannot be one. */
  parseAddress(raw: string): string | null;
  /**
   * Sends one text if the owner allowed replies to this contact. Throws
   * `ContactSendError` with a readable reason when refused.
   */
  send(address: string, text: string): Promise<{ to: string }>;
}

export const ContactChannelProvider = DiscoveryService.createDecorator<void>();

/** Routes a contact id to its channel. */
@Injectable()
export class ContactChannelRouter implements OnModuleInit {
  private readonly channels = new Map<string, ContactChannel>();
  /** Sorted once: the channels are all known at start, and `contacts_send` asks on every turn whether one is connected. */
  private sorted: readonly ContactChannel[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({
      metadataKey: ContactChannelProvider.KEY,
    })) {
      const channel = wrapper.instance as ContactChannel | undefined;
      if (!channel?.prefix) continue;
      if (this.channels.has(channel.prefix))
        throw new Error(
          `Two contact channels use the prefix '${channel.prefix}'`,
        );
      this.channels.set(channel.prefix, channel);
    }
    this.sorted = [...this.channels.values()].sort((a, b) =>
      a.prefix.localeCompare(b.prefix),
    );
  }

  /** Sorted by prefix, so messages that list them read the same on every start. */
  all(): readonly ContactChannel[] {
    return this.sorted;
  }

  /** The channel and address of a contact id, or the reason it names none. */
  route(
    contactId: string,
  ):
    | { ok: true; channel: ContactChannel; address: string }
    | { ok: false; error: string } {
    const examples = this.all()
      .map((c) => c.idExample)
      .join(' or ');
    const m = /^([a-z]{1,10}):(.+)$/.exec(contactId.trim());
    if (!m)
      return {
        ok: false,
        error: `invalid contact_id: ${JSON.stringify(contactId)} (expected ${examples || 'a channel prefix and an id'})`,
      };
    const channel = this.channels.get(m[1]);
    if (!channel)
      return {
        ok: false,
        error: `unsupported contact channel '${m[1]}' in contact_id (available: ${examples || 'none'})`,
      };
    const address = channel.parseAddress(m[2]);
    if (!address)
      return {
        ok: false,
        error: `invalid contact_id: ${JSON.stringify(contactId)} (expected ${channel.idExample})`,
      };
    return { ok: true, channel, address };
  }
}
