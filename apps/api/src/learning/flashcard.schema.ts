import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/** The owner's flashcards (the learning mode), each with its FSRS schedule. */
export const FLASHCARDS_COLLECTION = 'flashcards';

@Schema({ collection: FLASHCARDS_COLLECTION, versionKey: false })
export class FlashcardRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true })
  front!: string;
  @Prop({ type: String, required: true })
  back!: string;
  /** A topic to review on its own ("spanish"); null: none. */
  @Prop({ type: String, default: null })
  deck!: string | null;
  // The FSRS card state (ts-fsrs `Card`), kept as the library names it.
  @Prop({ type: Date, required: true })
  due!: Date;
  @Prop({ type: Number, required: true })
  stability!: number;
  @Prop({ type: Number, required: true })
  difficulty!: number;
  @Prop({ type: Number, required: true })
  elapsed_days!: number;
  @Prop({ type: Number, required: true })
  scheduled_days!: number;
  @Prop({ type: Number, required: true })
  learning_steps!: number;
  @Prop({ type: Number, required: true })
  reps!: number;
  @Prop({ type: Number, required: true })
  lapses!: number;
  @Prop({ type: Number, required: true })
  state!: number;
  @Prop({ type: Date, default: null })
  last_review!: Date | null;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const FlashcardSchema = SchemaFactory.createForClass(FlashcardRecord);
FlashcardSchema.index({ due: 1 });
