import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';

export const TELEGRAM_PERMISSIONS_COLLECTION = 'telegram_permissions';

/**
 * Which Telegram chat (a person or a group) the AI may read from or reply to.
 * Only this module writes it; db_query may only read it.
 */
@Schema({ collection: TELEGRAM_PERMISSIONS_COLLECTION, versionKey: false })
export class TelegramPermissionRecord {
  _id!: Types.ObjectId;
  /** Telegram's chat id as a string (negative for groups), unique. */
  @Prop({ type: String, required: true })
  chatId!: string;
  @Prop({ type: String, required: true })
  displayName!: string;
  @Prop({ type: Boolean, default: false })
  canRead!: boolean;
  @Prop({ type: Boolean, default: false })
  canReply!: boolean;
  @Prop({ type: Boolean, default: false })
  trusted!: boolean;
  /** The console chat of this Telegram chat's auto-replies, set lazily. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  consoleChatId!: string | null;
  @Prop({ type: Date, default: null })
  autoReplyPausedUntil!: Date | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const TelegramPermissionSchema = SchemaFactory.createForClass(
  TelegramPermissionRecord,
);
TelegramPermissionSchema.index({ chatId: 1 }, { unique: true });
