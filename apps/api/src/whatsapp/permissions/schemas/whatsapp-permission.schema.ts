import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';

export const WHATSAPP_PERMISSIONS_COLLECTION = 'whatsapp_permissions';

/**
 * Which WhatsApp contact the AI may read from or reply to (`whatsapp_permissions`).
 * Only this module writes it; the AI reads it through db_query and changes it
 * through whatsapp_manage_permission.
 */
@Schema({ collection: WHATSAPP_PERMISSIONS_COLLECTION, versionKey: false })
export class WhatsAppPermissionRecord {
  _id!: Types.ObjectId;
  /** Digits only, unique. */
  @Prop({ type: String, required: true })
  phoneNumber!: string;
  @Prop({ type: String, required: true })
  displayName!: string;
  /** Optional link to `contacts._id`. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  contactId!: string | null;
  @Prop({ type: Boolean, default: false })
  canRead!: boolean;
  @Prop({ type: Boolean, default: false })
  canReply!: boolean;
  /** Auto-replies to this contact may see the owner's memory. */
  @Prop({ type: Boolean, default: false })
  trusted!: boolean;
  /** The contact's dedicated chat, set lazily by the auto-reply service. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  chatId!: string | null;
  /** Set by the auto-reply's bot-loop guard: no auto-replies to this contact until then. */
  @Prop({ type: Date, default: null })
  autoReplyPausedUntil!: Date | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const WhatsAppPermissionSchema = SchemaFactory.createForClass(
  WhatsAppPermissionRecord,
);
WhatsAppPermissionSchema.index({ phoneNumber: 1 }, { unique: true });
WhatsAppPermissionSchema.index({ contactId: 1 });
