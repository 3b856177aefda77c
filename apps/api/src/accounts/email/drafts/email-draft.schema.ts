import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import type {
  EmailDraftAction,
  EmailDraftRepliesTo,
  EmailDraftStatus,
} from '@metatronos/shared-types';

/**
 * Messages the AI wrote in unattended turns, held for the owner. Not in the
 * AI-writable set, so db_query may read but never write it: a model cannot
 * approve (or forge) its own draft.
 */
export const EMAIL_DRAFTS_COLLECTION = 'email_drafts';

@Schema({ collection: EMAIL_DRAFTS_COLLECTION, versionKey: false })
export class EmailDraftRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  accountId!: string;
  /** Kept so the draft still says where it was to be sent from after the account is gone. */
  @Prop({ type: String, required: true })
  accountAddress!: string;
  @Prop({ type: String, required: true })
  action!: EmailDraftAction;
  @Prop({ type: [String], default: [] })
  to!: string[];
  @Prop({ type: [String], default: [] })
  cc!: string[];
  @Prop({ type: String, default: '' })
  subject!: string;
  @Prop({ type: String, default: '' })
  text!: string;
  @Prop({ type: String, default: null })
  inReplyTo!: string | null;
  @Prop({ type: [String], default: [] })
  references!: string[];
  @Prop({ type: String, required: true })
  source!: string;
  @Prop({ type: String, default: null })
  chatId!: string | null;
  /** Missing on drafts stored before origins were kept. */
  @Prop({ type: String, default: null })
  jobId?: string | null;
  @Prop({ type: String, default: null })
  jobName?: string | null;
  @Prop({ type: Object, default: null })
  repliesTo?: EmailDraftRepliesTo | null;
  @Prop({ type: String, required: true })
  status!: EmailDraftStatus;
  @Prop({ type: String, default: null })
  error!: string | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, default: null })
  sentAt!: Date | null;
}

export const EmailDraftSchema = SchemaFactory.createForClass(EmailDraftRecord);
