import { ATTACHMENT_KINDS } from '@metatronos/shared-types';
import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { AttachmentKind } from '@metatronos/shared-types';

/**
 * An uploaded file. The bytes live in `<DATA_DIR>/attachments/<sha256>`; `chatId`/`messageId` are
 * set when a message is sent with it (an attachment goes with one message only).
 */
@Schema({ collection: 'attachments', versionKey: false })
export class AttachmentRecord {
  _id!: Types.ObjectId;
  /** The client's file name, sanitised: display text only. */
  @Prop({ type: String, required: true })
  name!: string;
  @Prop({ type: String, required: true })
  mime!: string;
  @Prop({ type: Number, required: true })
  size!: number;
  @Prop({ type: String, required: true })
  sha256!: string;
  @Prop({ type: String, required: true, enum: ATTACHMENT_KINDS })
  kind!: AttachmentKind;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  chatId!: Types.ObjectId | null;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  messageId!: Types.ObjectId | null;
  @Prop({ required: true })
  createdAt!: Date;
}

export const AttachmentSchema = SchemaFactory.createForClass(AttachmentRecord);
// Created at start by AttachmentsService: a deleted chat's uploads and a file's other users are index lookups.
AttachmentSchema.index({ chatId: 1 });
AttachmentSchema.index({ sha256: 1 });
