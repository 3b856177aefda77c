import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { AccountKind, MailServerInput } from '@metatronos/shared-types';
import { ACCOUNTS_COLLECTION } from '../account-records';

/**
 * An email (IMAP + SMTP) or calendar (CalDAV) account with its password(s). Only
 * AccountsModule writes it; the `auth_` collection is hidden from the AI and the console's data browser.
 */
@Schema({ collection: ACCOUNTS_COLLECTION, versionKey: false })
export class AccountDoc {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  kind!: AccountKind;
  @Prop({ type: String, required: true })
  name!: string;
  /** Email: the mailbox address. Calendar: the user name. */
  @Prop({ type: String, required: true })
  address!: string;
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  imap!: MailServerInput | null;
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  smtp!: MailServerInput | null;
  /** Calendar: the CalDAV URL, user and password. */
  @Prop({ type: String, default: null })
  url!: string | null;
  @Prop({ type: String, default: null })
  user!: string | null;
  @Prop({ type: String, default: null })
  password!: string | null;
  /** Calendar: false when a plain http:// URL was chosen explicitly. */
  @Prop({ type: Boolean, default: true })
  secure!: boolean;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const AccountSchema = SchemaFactory.createForClass(AccountDoc);

/**
 * Counts writes through this model (the accounts service's, and any other code's), so that a
 * copy of the accounts read before a write is known to be stale (AccountsStore).
 */
export const accountWrites = { generation: 0 };
const counted = () => {
  accountWrites.generation += 1;
};
// Before and after: a read that runs while the write does is not kept either.
const WRITES = [
  'save',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
] as const;
AccountSchema.pre([...WRITES], counted);
AccountSchema.post([...WRITES], counted);
AccountSchema.pre('insertMany', counted);
AccountSchema.post('insertMany', counted);
AccountSchema.pre('bulkWrite', counted);
AccountSchema.post('bulkWrite', counted);
