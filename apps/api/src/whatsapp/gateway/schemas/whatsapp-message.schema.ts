import { INBOUND_PROCESSING } from '../../../channels/contact-auto-reply';
import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** Where the auto-reply stands with a stored message (the states every channel shares). */
export const WHATSAPP_MESSAGE_PROCESSING = INBOUND_PROCESSING;
export type WhatsAppMessageProcessing =
  (typeof WHATSAPP_MESSAGE_PROCESSING)[number];

/**
 * One WhatsApp message (`whatsapp_messages`): the seed's BufferedMessage, keyed
 * by the WhatsApp message id so a redelivered message is stored once. Owned by
 * the WhatsApp module; the AI may read it, never write it.
 */
@Schema({ collection: 'whatsapp_messages', versionKey: false })
export class WhatsAppMessageRecord {
  /** The WhatsApp message id (`key.id`). */
  @Prop({ type: String, required: true })
  _id!: string;
  @Prop({ type: String, required: true })
  from!: string;
  @Prop({ type: String, default: null })
  fromName!: string | null;
  @Prop({ type: String, required: true })
  to!: string;
  @Prop({ type: String, required: true })
  body!: string;
  /** Milliseconds since epoch (the message's own time). */
  @Prop({ type: Number, required: true })
  timestamp!: number;
  @Prop({ type: Boolean, required: true })
  fromMe!: boolean;
  @Prop({ type: Boolean, required: true })
  isGroup!: boolean;
  /** Digits of the other party: the sender of a received message, the recipient of an own one. */
  @Prop({ type: String, required: true })
  phone!: string;
  @Prop({ type: Date, required: true })
  receivedAt!: Date;
  @Prop({
    type: String,
    required: true,
    enum: WHATSAPP_MESSAGE_PROCESSING,
  })
  processing!: WhatsAppMessageProcessing;
}

export const WhatsAppMessageSchema = SchemaFactory.createForClass(
  WhatsAppMessageRecord,
);
// Created at start by WhatsAppMessageStore. An equality on the leading field is an index lookup on the
// embedded database too (tools/ferretdb/patches): by contact (`phone`, `from`, `to`) and by auto-reply state.
WhatsAppMessageSchema.index({ timestamp: -1 });
WhatsAppMessageSchema.index({ phone: 1, timestamp: -1 });
WhatsAppMessageSchema.index({ from: 1, timestamp: -1 });
WhatsAppMessageSchema.index({ to: 1, timestamp: -1 });
WhatsAppMessageSchema.index({ processing: 1 });
