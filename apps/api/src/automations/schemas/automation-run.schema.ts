import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type {
  AutomationKind,
  RunOutcome,
  RunTrigger,
  TokenUsage,
} from '@metatronos/shared-types';

/** One run of a scheduled job or one pulse. Feature-owned: the AI can read it, never write it. */
@Schema({ collection: 'automation_runs', versionKey: false })
export class AutomationRunRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  kind!: AutomationKind;
  /** The job; null for a pulse. */
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  jobId!: Types.ObjectId | null;
  @Prop({ type: String, required: true })
  trigger!: RunTrigger;
  @Prop({ type: String, required: true })
  outcome!: RunOutcome;
  @Prop({ type: Date, default: null })
  dueAt!: Date | null;
  @Prop({ type: Date, required: true })
  startedAt!: Date;
  @Prop({ type: Date, default: null })
  finishedAt!: Date | null;
  @Prop({ type: String, default: null })
  reason!: string | null;
  @Prop({ type: String, default: null })
  error!: string | null;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  chatId!: Types.ObjectId | null;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  messageId!: Types.ObjectId | null;
  @Prop({ type: Object, default: null })
  usage!: TokenUsage | null;
}

export const AutomationRunSchema =
  SchemaFactory.createForClass(AutomationRunRecord);
AutomationRunSchema.index({ kind: 1, jobId: 1, startedAt: -1 });
// A job's runs (newest first) by the job, not by scanning every run of every job.
AutomationRunSchema.index({ jobId: 1, _id: -1 });
