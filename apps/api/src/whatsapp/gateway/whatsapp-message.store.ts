import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { BufferedMessage } from '@metatronos/shared-types';
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

const DUPLICATE_KEY = 11000;

/** `whatsapp_messages`: every message the socket delivered, once per message id. */
@Injectable()
export class WhatsAppMessageStore {
  constructor(
    @InjectModel(WhatsAppMessageRecord.name)
    private readonly model: Model<WhatsAppMessageRecord>,
  ) {}

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
    let errors: Array<{ index: number; code?: number; errmsg?: string }> = [];
    try {
      await this.model.collection.insertMany(docs, { ordered: false });
    } catch (error) {
      const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
      // Not a per-document refusal (the database is away): nothing is known to be stored.
      if (!Array.isArray(writeErrors)) throw error;
      errors = writeErrors as typeof errors;
    }
    const refused = new Map(errors.map((e) => [e.index, e]));
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

  /** The last `limit` messages matching the query, oldest first. */
  async find({
    contact,
    limit,
    onlyPhones,
  }: WhatsAppMessageQuery): Promise<BufferedMessage[]> {
    if (onlyPhones && onlyPhones.length === 0) return [];
    const filter: Record<string, unknown> = {};
    const digits = contact?.replace(/\D/g, '');
    // A contact without a single digit names nobody.
    if (contact?.trim() && !digits) return [];
    if (digits)
      filter['$or'] = [
        { from: { $regex: digits } },
        { to: { $regex: digits } },
      ];
    if (onlyPhones) filter['phone'] = { $in: [...onlyPhones] };
    const docs = await this.model
      .find(filter)
      .sort({ timestamp: -1, _id: -1 })
      .limit(limit)
      .lean()
      .exec();
    return docs.reverse().map(toBufferedMessage);
  }
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
