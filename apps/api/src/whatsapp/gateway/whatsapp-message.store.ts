import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { BufferedMessage } from '@metatronos/shared-types';
import { StartUpWork } from '../../database/start-up-work';
import { DUPLICATE_KEY } from '../../database/duplicate-key';
import { insertUnordered } from '../../database/unordered-insert';
import {
  WhatsAppMessageRecord,
  type WhatsAppMessageProcessing,
} from './schemas/whatsapp-message.schema';

export interface StoredWhatsAppMessage {
  message: BufferedMessage;
  phone: string;
  receivedAt: Date;
  processing: WhatsAppMessageProcessing;
}

export interface AddedMessages {
  /** Ids stored by this call, in the order given. */
  stored: string[];
  /** Ids that were already stored (or came twice in the batch): dropped. */
  duplicates: string[];
  /** Ids that could not be stored, with the database's reason. */
  failed: Array<{ id: string; error: string }>;
}

export interface WhatsAppMessageQuery {
  contact?: string;
  limit: number;
  onlyPhones?: readonly string[];
}

/** `whatsapp_messages`: every message the socket delivered, once per message id. */
@Injectable()
export class WhatsAppMessageStore implements OnApplicationBootstrap {
  /**
   * Every `from` and `to` ever stored (a few per contact), loaded once: a contact's digits are a
   * substring match, which no index answers, so the matching addresses are picked here and their
   * messages found by equality, through the `from`/`to` indexes. A deleted message leaves its
   * address here, which is harmless (it then matches nothing).
   */
  private addresses?: Promise<Set<string>>;
  /** Messages given to `addSoon` and not inserted yet: they go in together. */
  private soon: Array<{
    item: StoredWhatsAppMessage;
    resolve: (result: AddedMessages) => void;
    reject: (error: unknown) => void;
  }> = [];
  private adding: Promise<void> | null = null;

  constructor(
    @InjectModel(WhatsAppMessageRecord.name)
    private readonly model: Model<WhatsAppMessageRecord>,
    private readonly startUp: StartUpWork,
  ) {}

  /** autoIndex is off (see DatabaseModule): the indexes (none unique) are built here, once per boot, while the server answers. */
  onApplicationBootstrap(): void {
    this.startUp.run('create the WhatsApp message indexes', () =>
      this.model.createIndexes(),
    );
  }

  /**
   * Stores a batch (one `messages.upsert`) in one round trip; a message whose
   * id is already stored is dropped, the others still go in.
   */
  async addMany(
    items: readonly StoredWhatsAppMessage[],
  ): Promise<AddedMessages> {
    const result: AddedMessages = { stored: [], duplicates: [], failed: [] };
    if (items.length === 0) return result;
    const docs = items.map(
      ({ message: { id, ...fields }, phone, receivedAt, processing }) => ({
        _id: id as never,
        ...fields,
        phone,
        receivedAt,
        processing,
      }),
    );
    const errors = await insertUnordered(this.model.collection, docs);
    const refused = new Map(errors.map((e) => [e.index, e]));
    if (this.addresses) {
      const known = await this.addresses.catch(() => undefined);
      for (const { message } of items) {
        known?.add(message.from);
        known?.add(message.to);
      }
    }
    items.forEach(({ message: { id } }, index) => {
      const error = refused.get(index);
      if (!error) result.stored.push(id);
      else if (error.code === DUPLICATE_KEY) result.duplicates.push(id);
      else
        result.failed.push({
          id,
          error: error.errmsg ?? `error ${error.code}`,
        });
    });
    return result;
  }

  /**
   * Stores one message together with others given while an insert is under way (the replies
   * many contacts' auto-replies send at once): one insert for all of them, none waits when
   * the store is idle. Resolves with this message's part of the result once it is stored.
   */
  addSoon(item: StoredWhatsAppMessage): Promise<AddedMessages> {
    const id = item.message.id;
    return new Promise<AddedMessages>((resolve, reject) => {
      this.soon.push({ item, resolve, reject });
      if (this.soon.length === 1 && !this.adding)
        setImmediate(() => this.addNext());
    }).then(({ stored, duplicates, failed }) => ({
      stored: stored.filter((s) => s === id),
      duplicates: duplicates.filter((d) => d === id),
      failed: failed.filter((f) => f.id === id),
    }));
  }

  /** One insert of `addSoon` at a time: what is given meanwhile goes in with the next. */
  private addNext(): void {
    if (this.adding || this.soon.length === 0) return;
    const batch = this.soon;
    this.soon = [];
    this.adding = this.addMany(batch.map((b) => b.item))
      .then(
        (result) => batch.forEach((b) => b.resolve(result)),
        (error: unknown) => batch.forEach((b) => b.reject(error)),
      )
      .finally(() => {
        this.adding = null;
        this.addNext();
      });
  }

  /** The last `limit` messages matching the query, oldest first. */
  async find({
    contact,
    limit,
    onlyPhones,
  }: WhatsAppMessageQuery): Promise<BufferedMessage[]> {
    if (onlyPhones && onlyPhones.length === 0) return [];
    const digits = contact?.replace(/\D/g, '');
    // A contact without a single digit names nobody.
    if (contact?.trim() && !digits) return [];
    const phones = onlyPhones
      ? { phone: { $in: [...new Set(onlyPhones)] } }
      : {};
    // One indexed equality per lookup, merged here: `{from: {$regex}}` or `{phone: {$in}}` would read every message.
    const lookups: Array<Record<string, unknown>> = [];
    if (digits) {
      for (const address of await this.knownAddresses())
        if (address.includes(digits))
          lookups.push(
            { from: address, ...phones },
            { to: address, ...phones },
          );
    } else if (onlyPhones) {
      for (const phone of new Set(onlyPhones)) lookups.push({ phone });
    } else lookups.push({});
    const found = await Promise.all(
      lookups.map((filter) =>
        this.model
          .find(filter)
          .sort({ timestamp: -1, _id: -1 })
          .limit(limit)
          .lean()
          .exec(),
      ),
    );
    const byId = new Map<string, WhatsAppMessageRecord>();
    for (const doc of found.flat()) byId.set(doc._id, doc);
    return [...byId.values()]
      .sort(newestFirst)
      .slice(0, limit)
      .reverse()
      .map(toBufferedMessage);
  }

  private knownAddresses(): Promise<Set<string>> {
    this.addresses ??= Promise.all([
      this.model.distinct('from').exec(),
      this.model.distinct('to').exec(),
    ]).then(([from, to]) => new Set<string>([...from, ...to]));
    // A failed load is tried again by the next query.
    this.addresses.catch(() => (this.addresses = undefined));
    return this.addresses;
  }
}

/** The order of `sort({ timestamp: -1, _id: -1 })`. */
function newestFirst(
  a: WhatsAppMessageRecord,
  b: WhatsAppMessageRecord,
): number {
  if (a.timestamp !== b.timestamp) return b.timestamp - a.timestamp;
  return a._id < b._id ? 1 : a._id > b._id ? -1 : 0;
}

function toBufferedMessage(doc: WhatsAppMessageRecord): BufferedMessage {
  return {
    id: doc._id,
    from: doc.from,
    fromName: doc.fromName ?? null,
    to: doc.to,
    body: doc.body,
    timestamp: doc.timestamp,
    fromMe: doc.fromMe,
    isGroup: doc.isGroup,
  };
}
