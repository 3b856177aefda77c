import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type {
  ActionEffect,
  ActionReason,
  ActionSource,
  ActionStatus,
  TaintMark,
} from '@metatronos/shared-types';

/**
 * Tool calls held for the owner. Feature-owned and hidden from db_query (see
 * collection-access.ts): a model can neither read what waits nor approve, edit or
 * forge an action of its own.
 */
export const PENDING_ACTIONS_COLLECTION = 'pending_actions';

/** One row per approve that got through: the unique `_id` makes a second approve lose, on FerretDB and MongoDB alike. */
export const PENDING_ACTION_CLAIMS_COLLECTION = 'pending_action_claims';

@Schema({ collection: PENDING_ACTIONS_COLLECTION, versionKey: false })
export class PendingActionRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  tool!: string;
  @Prop({ type: String, required: true })
  summary!: string;
  /** The validated arguments as JSON: a model's object may hold keys a document refuses (`$set`). */
  @Prop({ type: String, required: true })
  argumentsJson!: string;
  @Prop({ type: String, default: null })
  chatId!: string | null;
  @Prop({ type: String, default: null })
  messageId!: string | null;
  @Prop({ type: String, default: null })
  jobId!: string | null;
  /** The account the turn had selected (email, calendar): approve acts on the same one. */
  @Prop({ type: String, default: null })
  accountId!: string | null;
  @Prop({ type: String, required: true })
  source!: ActionSource;
  @Prop({ type: [MongooseSchema.Types.Mixed], default: [] })
  taint!: TaintMark[];
  @Prop({ type: MongooseSchema.Types.Mixed, required: true })
  reason!: ActionReason;
  @Prop({ type: String, required: true })
  effect!: ActionEffect;
  @Prop({ type: String, required: true })
  status!: ActionStatus;
  @Prop({ type: String, default: null })
  resultJson!: string | null;
  @Prop({ type: String, default: null })
  error!: string | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
  @Prop({ type: Date, required: true })
  expiresAt!: Date;
}

export const PendingActionSchema =
  SchemaFactory.createForClass(PendingActionRecord);
PendingActionSchema.index({ status: 1, createdAt: -1 });
