import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * `master`: the owner's profile, one document. The AI keeps it up to date
 * through `db_query` (usually `updateOne({}, { $set }, { upsert: true })`).
 */
@Schema({
  collection: 'master',
  versionKey: false,
  timestamps: { createdAt: false, updatedAt: true },
})
export class OwnerProfile {
  @Prop({ type: String })
  name?: string;

  /** What the assistant calls the owner. */
  @Prop({ type: String })
  preferredName?: string;

  @Prop({ type: String })
  email?: string;

  @Prop({ type: String })
  phone?: string;

  /** `YYYY-MM-DD`, or `--MM-DD` when the year is unknown: a calendar day, never shifted by a time zone. */
  @Prop({ type: String })
  birthday?: string;

  @Prop({ type: String })
  address?: string;

  @Prop({ type: String })
  city?: string;

  @Prop({ type: String })
  country?: string;

  /** IANA zone, e.g. `Europe/Paris`. */
  @Prop({ type: String })
  timezone?: string;

  /** BCP 47 tag, e.g. `fr` or `en-GB`. */
  @Prop({ type: String })
  language?: string;

  @Prop({ type: String })
  occupation?: string;

  @Prop({ type: String })
  notes?: string;

  updatedAt?: Date;
}

export const OwnerProfileSchema = SchemaFactory.createForClass(OwnerProfile);
