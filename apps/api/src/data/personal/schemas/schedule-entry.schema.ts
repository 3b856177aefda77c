import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Types } from 'mongoose';

export const SCHEDULE_STATUSES = [
  'confirmed',
  'tentative',
  'cancelled',
  'done',
] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** `schedule`: the owner's calendar (appointments, events, reminders). */
@Schema({ collection: 'schedule', versionKey: false, timestamps: true })
export class ScheduleEntry {
  @Prop({ type: String, required: true, trim: true })
  title!: string;

  @Prop({ type: String })
  description?: string;

  @Prop({ type: String })
  location?: string;

  @Prop({ type: Date, required: true })
  start!: Date;

  @Prop({ type: Date })
  end?: Date;

  /** A whole-day entry: only the calendar day of `start` (and `end`) matters. */
  @Prop({ type: Boolean, default: false })
  allDay!: boolean;

  /** RFC 5545 recurrence rule, e.g. `FREQ=WEEKLY;BYDAY=MO`. */
  @Prop({ type: String })
  rrule?: string;

  /** The `contacts` document this entry is with or about. */
  @Prop({ type: Types.ObjectId })
  contactId?: Types.ObjectId;

  @Prop({ type: String, enum: SCHEDULE_STATUSES, default: 'confirmed' })
  status!: ScheduleStatus;

  /** Minutes before `start` to remind the owner. */
  @Prop({ type: Number, min: 0 })
  reminderMinutes?: number;

  createdAt?: Date;
  updatedAt?: Date;
}

export const ScheduleEntrySchema = SchemaFactory.createForClass(ScheduleEntry);
ScheduleEntrySchema.index({ start: 1 });
