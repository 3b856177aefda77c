import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { PulsesPerDay, QuietHoursRange } from '@metatronos/shared-types';

export const PULSE_STATE_ID = 'pulse';

/** The one Pulse document (`pulse`, `_id: "pulse"`): the owner's settings, the AI's notes and the day's counters. */
@Schema({ collection: 'pulse', versionKey: false })
export class PulseStateRecord {
  @Prop({ type: String })
  _id!: string;
  @Prop({ type: Boolean, default: false })
  enabled!: boolean;
  @Prop({ type: [Number], default: undefined })
  activeDays!: number[];
  @Prop({ type: Number })
  pulsesPerDay!: PulsesPerDay;
  @Prop({ type: [Object], default: undefined })
  quietHours!: QuietHoursRange[];
  @Prop({ type: String, default: '' })
  notes!: string;
  /** The mode every pulse starts in; missing: automations. */
  @Prop({ type: String, default: undefined })
  mode?: string;
  @Prop({ type: Date, default: null })
  notesUpdatedAt!: Date | null;
  /** Pulses fired on `pulsesTodayDate` (the owner's local date): a new day reads as 0. */
  @Prop({ type: Number, default: 0 })
  pulsesToday!: number;
  @Prop({ type: String, default: null })
  pulsesTodayDate!: string | null;
  @Prop({ type: Date, default: null })
  lastPulseAt!: Date | null;
  /** The last slot handled (fired, skipped or missed), so no slot is handled twice. */
  @Prop({ type: Date, default: null })
  lastSlotAt!: Date | null;
  @Prop({ type: MongooseSchema.Types.ObjectId, default: null })
  chatId!: Types.ObjectId | null;
  @Prop({ type: Date, default: null })
  updatedAt!: Date | null;
}

export const PulseStateSchema = SchemaFactory.createForClass(PulseStateRecord);
