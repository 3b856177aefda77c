import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { CronRunView } from '@metatronos/shared-types';

/**
 * A scheduled job (`cronjobs`). The AI may also write this collection through
 * db_query, so every field is read defensively (see `job-record-shape.ts`).
 */
@Schema({ collection: 'cronjobs', versionKey: false })
export class CronJobRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  name!: string;
  @Prop({ type: String, required: true })
  instruction!: string;
  @Prop({ type: String, required: true })
  cronExpression!: string;
  @Prop({ type: Boolean, default: true })
  enabled!: boolean;
  /** The mode each run starts in; missing: the default mode. */
  @Prop({ type: String, default: undefined })
  mode?: string;
  /** The job's own chat; created with the job, or again at the next run if the owner deleted it. */
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  chatId!: Types.ObjectId | null;
  /** The last scheduled time already handled (run, skipped or missed), or when the schedule was set. */
  @Prop({ type: Date, default: null })
  lastDueAt!: Date | null;
  @Prop({ type: Number, default: 0 })
  consecutiveFailures!: number;
  @Prop({ type: Object, default: null })
  lastRun!: CronRunView | null;
  /** Who made the job; missing on jobs stored before it was recorded. */
  @Prop({ type: String, default: null })
  createdBy?: 'owner' | 'ai' | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const CronJobSchema = SchemaFactory.createForClass(CronJobRecord);
