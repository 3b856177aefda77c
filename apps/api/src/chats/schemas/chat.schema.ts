import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import type { ChatKind } from '@metatronos/shared-types';

export const DEFAULT_CHAT_TITLE = 'New chat';

@Schema({ collection: 'chats', versionKey: false })
export class ChatRecord {
  _id!: Types.ObjectId;
  @Prop({ required: true })
  title!: string;
  /** True until the owner names the chat: the first message then titles it. */
  @Prop({ type: Boolean, default: true })
  autoTitle!: boolean;
  /** Missing on chats stored before kinds existed: those are the owner's. */
  @Prop({ type: String, default: 'chat' })
  kind?: ChatKind;
  /** The conversation's mode (capability gating); missing: the default mode. */
  @Prop({ type: String, default: undefined })
  mode?: string;
  /** The account chosen with select_account for the mode's tools. */
  @Prop({ type: String, default: null })
  accountId?: string | null;
  /** Missing on chats stored before pinning existed: not pinned. */
  @Prop({ type: Boolean, default: false })
  pinned?: boolean;
  /** Missing on chats stored before archiving existed: not archived. */
  @Prop({ type: Boolean, default: false })
  archived?: boolean;
  /** The model id this chat's replies use; missing or null: the primary model. */
  @Prop({ type: String, default: null })
  model?: string | null;
  /** Set once a message of the chat got a second version: only then are the versions worked out. */
  @Prop({ type: Boolean, default: undefined })
  forked?: boolean;
  @Prop({ required: true })
  createdAt!: Date;
  @Prop({ required: true })
  updatedAt!: Date;
}

export const ChatSchema = SchemaFactory.createForClass(ChatRecord);
ChatSchema.index({ updatedAt: -1 });
