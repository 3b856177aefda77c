import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type {
  MemoryRunChange,
  MemoryRunModelOutcome,
  MemoryRunView,
} from '@metatronos/shared-types';

/** One nightly consolidation run (`memory_runs`): what it changed with the prior text, or why it refused. */
@Schema({ collection: 'memory_runs', versionKey: false })
export class MemoryRunRecord {
  _id!: Types.ObjectId;
  @Prop({ required: true })
  startedAt!: Date;
  @Prop({ type: String, required: true })
  outcome!: 'done' | 'refused';
  @Prop({ type: String, default: null })
  reason!: string | null;
  @Prop({ required: true })
  notesBefore!: number;
  @Prop({ type: [MongooseSchema.Types.Mixed], default: [] })
  changes!: MemoryRunChange[];
  /** Missing on runs stored before the model part existed. */
  @Prop({ type: String })
  modelOutcome?: MemoryRunModelOutcome;
  @Prop({ type: String, default: null })
  modelReason?: string | null;
  @Prop({ type: String, default: null })
  error?: string | null;
  @Prop({ type: String })
  trigger?: MemoryRunView['trigger'];
}

export const MemoryRunSchema = SchemaFactory.createForClass(MemoryRunRecord);
MemoryRunSchema.index({ startedAt: -1 });
