import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { CronRunView } from '@metatronos/shared-types';

export interface StoredMailTrigger {
  accountId: string;
  folder: string;
}

export interface MailCursor {
  /** The folder's UIDVALIDITY (a 32-bit number, kept as text): another value means the UIDs were renumbered. */
  uidValidity: string;
  lastUid: number;
}

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
  /** The schedule; null for a mail-triggered job (exactly one of the two is set). */
  @Prop({ type: String, default: null })
  cronExpression!: string | null;
  /** Run once per new message in this folder of this email account. */
  @Prop({ type: Object, default: null })
  mailTrigger?: StoredMailTrigger | null;
  /**
   * The last message already handled in the watched folder (app-owned): a restart
   * neither runs it again nor misses what came while the app was down. Null until
   * the first watch, which starts at the folder's newest message.
   */
  @Prop({ type: Object, default: null })
  mailCursor?: MailCursor | null;
  @Prop({ type: Boolean, default: true })
  enabled!: boolean;
  /** The mode each run starts in; missing: the default mode. */
  @Prop({ type: String, default: undefined })
  mode?: string;
  /** Tools the owner lets this job use on its own (no pending action); owner-set only (REST, the owner's chat). */
  @Prop({ type: [String], default: undefined })
  actOnOwnTools?: string[];
  /** Tool rounds per run; missing: DEFAULT_JOB_MAX_ROUNDS. */
  @Prop({ type: Number, default: undefined })
  maxRounds?: number;
  /** Tokens per run (all its model calls); missing: DEFAULT_JOB_MAX_TOKENS_PER_RUN. */
  @Prop({ type: Number, default: undefined })
  maxTokensPerRun?: number;
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
