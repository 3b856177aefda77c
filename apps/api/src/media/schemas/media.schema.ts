import { MEDIA_KINDS, MEDIA_MIMES } from '@metatronos/shared-types';
import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { MediaKind, MediaMime } from '@metatronos/shared-types';

/**
 * One stored image (`media`). The bytes live in `<DATA_DIR>/media/<sha256>.<ext>`;
 * several records may share a file (same bytes). The AI may read this
 * collection, never write it.
 */
@Schema({ collection: 'media', versionKey: false })
export class MediaRecord {
  _id!: Types.ObjectId;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  chatId!: Types.ObjectId | null;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  messageId!: Types.ObjectId | null;
  @Prop({ type: String, required: true, enum: MEDIA_KINDS })
  kind!: MediaKind;
  @Prop({ type: String, default: '' })
  prompt!: string;
  @Prop({ type: String, default: '' })
  shortDescription!: string;
  @Prop({ type: String, required: true })
  model!: string;
  @Prop({
    type: String,
    required: true,
    enum: MEDIA_MIMES,
  })
  mime!: MediaMime;
  @Prop({ type: Number, required: true })
  size!: number;
  @Prop({ type: Number, required: true })
  width!: number;
  @Prop({ type: Number, required: true })
  height!: number;
  @Prop({ type: String, required: true })
  sha256!: string;
  /** An edit: the image it was made from. */
  @Prop({ type: MongooseSchema.Types.ObjectId, default: undefined })
  sourceMediaId?: Types.ObjectId;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: undefined })
  sourceAttachmentId?: Types.ObjectId;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const MediaSchema = SchemaFactory.createForClass(MediaRecord);
MediaSchema.index({ chatId: 1, createdAt: -1 });
