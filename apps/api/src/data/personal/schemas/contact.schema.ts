import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** `contacts`: people the owner knows. */
@Schema({ collection: 'contacts', versionKey: false, timestamps: true })
export class Contact {
  @Prop({ type: String, required: true, trim: true })
  name!: string;

  /** Nicknames and other spellings the owner uses. */
  @Prop({ type: [String], default: [] })
  aliases!: string[];

  /** e.g. `sister`, `colleague`, `dentist`. */
  @Prop({ type: String })
  relationship?: string;

  /** E.164 where known, e.g. `+33612345678`. */
  @Prop({ type: [String], default: [] })
  phones!: string[];

  @Prop({ type: [String], default: [] })
  emails!: string[];

  /** `YYYY-MM-DD`, or `--MM-DD` when the year is unknown. */
  @Prop({ type: String })
  birthday?: string;

  @Prop({ type: String })
  company?: string;

  @Prop({ type: String })
  notes?: string;

  @Prop({ type: [String], default: [] })
  tags!: string[];

  @Prop({ type: Date })
  lastContactAt?: Date;

  createdAt?: Date;
  updatedAt?: Date;
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
// Plain, not unique: two people may share a name.
ContactSchema.index({ name: 1 });
