import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

export const OWNER_ID = 'owner';

/** The one owner's credential. A fixed `_id` makes a second setup a duplicate-key error. */
@Schema({ collection: 'auth_owner', versionKey: false, timestamps: true })
export class OwnerCredential {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  passwordHash!: string;

  createdAt!: Date;
  updatedAt!: Date;
}

export const OwnerCredentialSchema =
  SchemaFactory.createForClass(OwnerCredential);
