import { MESSAGE_ROLES, MESSAGE_STATUSES } from '@metatronos/shared-types';
import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type {
  MessageAttachment,
  MessageAuthor,
  MessageDelivery,
  MessageStatus,
  MessageTrigger,
  TaintMark,
  TokenUsage,
} from '@metatronos/shared-types';
import type { StoredPart } from '../stored-parts';

/** One message of a chat. An assistant reply keeps its text and tool calls in order in `parts`. */
@Schema({ collection: 'messages', versionKey: false })
export class MessageRecord {
  _id!: Types.ObjectId;
  @Prop({ type: MongooseSchema.Types.ObjectId, required: true })
  chatId!: Types.ObjectId;
  @Prop({ type: String, required: true, enum: MESSAGE_ROLES })
  role!: 'user' | 'assistant';
  /** User messages a contact wrote (an auto-reply's incoming message); absent for the owner's. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: undefined })
  author?: MessageAuthor;
  /** User messages the scheduler wrote (a job's instruction, a Pulse prompt); absent for a person's. */
  @Prop({ type: String, default: undefined })
  trigger?: MessageTrigger;
  @Prop({ type: String, default: '' })
  content!: string;
  @Prop({ type: [MongooseSchema.Types.Mixed], default: undefined })
  parts?: StoredPart[];
  /** User messages: the files sent with it ({ id, name, mime, size, kind }; the records are in `attachments`). */
  @Prop({ type: [MongooseSchema.Types.Mixed], default: undefined })
  attachments?: MessageAttachment[];
  @Prop({
    type: String,
    required: true,
    enum: MESSAGE_STATUSES,
  })
  status!: MessageStatus;
  @Prop({ type: String, default: null })
  error!: string | null;
  @Prop({ type: String, default: null })
  model!: string | null;
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  usage!: TokenUsage | null;
  /** Auto-replies: whether the answer went out on WhatsApp. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: undefined })
  delivery?: MessageDelivery;
  /** Assistant replies: what brought third-party content into the turn (the action policy's marks). */
  @Prop({ type: [MongooseSchema.Types.Mixed], default: undefined })
  taint?: TaintMark[];
  /**
   * Versions (edit, regenerate): the message this one follows (the chat's own id for its first message).
   * Written when a message gets a sibling version or leaves the shown path; absent: the shown message before it.
   */
  @Prop({ type: MongooseSchema.Types.ObjectId, default: undefined })
  parentId?: Types.ObjectId;
  /**
   * Off the shown path: the version whose replacement hid this message (it comes back when that version is
   * shown again). Absent or null: on the shown path.
   */
  @Prop({ type: MongooseSchema.Types.ObjectId, default: undefined })
  hiddenWith?: Types.ObjectId | null;
  @Prop({ required: true })
  createdAt!: Date;
  @Prop({ required: true })
  updatedAt!: Date;
}

export const MessageSchema = SchemaFactory.createForClass(MessageRecord);
MessageSchema.index({ chatId: 1, _id: -1 });

/**
 * The filter for the messages on a chat's shown path, the conversation as it stands: other versions (an edit,
 * a regenerate) are off it. Absent and null both match, so messages stored before versions existed are on it.
 */
export const ON_PATH = { hiddenWith: null } as const;
