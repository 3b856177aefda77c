import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type {
  MemorySource,
  MemoryStatus,
  MemoryTrust,
  MemoryVersion,
} from '@metatronos/shared-types';

/** One note of the owner's memory (`memories`): a short fact and where it came from. */
@Schema({ collection: 'memories', versionKey: false })
export class MemoryNoteRecord {
  _id!: Types.ObjectId;
  @Prop({ required: true })
  text!: string;
  @Prop({ type: String, required: true })
  source!: MemorySource;
  @Prop({ type: String, required: true })
  trust!: MemoryTrust;
  @Prop({ type: String, required: true })
  status!: MemoryStatus;
  @Prop({ type: String, default: null })
  chatId!: string | null;
  @Prop({ type: [String], default: [] })
  messageIds!: string[];
  @Prop({ required: true })
  observedAt!: Date;
  @Prop({ type: String, default: null })
  supersedes!: string | null;
  @Prop({ type: String, default: null })
  supersededBy!: string | null;
  @Prop({ type: Date, default: null })
  expiresAt!: Date | null;
  @Prop({ type: [MongooseSchema.Types.Mixed], default: [] })
  history!: Array<Omit<MemoryVersion, 'at'> & { at: Date }>;
  @Prop({ required: true })
  createdAt!: Date;
  @Prop({ required: true })
  updatedAt!: Date;
}

export const MemoryNoteSchema = SchemaFactory.createForClass(MemoryNoteRecord);
