import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { BufferedMessage } from '@metatronos/shared-types';
import { WhatsAppMessageRecord, type WhatsAppMessageProcessing } from './schemas/whatsapp-message.schema';

export interface StoredWhatsAppMessage {
  message: BufferedMessage;
  phone: string;
  receivedAt: Date;
  processing: WhatsAppMessageProcessing;
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
  constructor(@InjectModel(WhatsAppMessageRecord.name) private readonly model: Model<WhatsAppMessageRecord>) {}

  /** Stores the message unless its id is already stored; true when it was new. */
  async add({ message, phone, receivedAt, processing }: StoredWhatsAppMessage): Promise<boolean> {
    const { id, ...fields } = message;
    try {
      await this.model.collection.insertOne({ _id: id as never, ...fields, phone, receivedAt, processing });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === DUPLICATE_KEY) return false;
      throw error;
    }
  }

  /** The last `limit` messages matching the query, oldest first. */
  async find({ contact, limit, onlyPhones }: WhatsAppMessageQuery): Promise<BufferedMessage[]> {
    if (onlyPhones && onlyPhones.length === 0) return [];
    const filter: Record<string, unknown> = {};
    const digits = contact?.replace(/\D/g, '');
    // A contact without a single digit names nobody.
    if (contact?.trim() && !digits) return [];
    if (digits) filter['$or'] = [{ from: { $regex: digits } }, { to: { $regex: digits } }];
    if (onlyPhones) filter['phone'] = { $in: [...onlyPhones] };
    const docs = await this.model.find(filter).sort({ timestamp: -1, _id: -1 }).limit(limit).lean().exec();
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
