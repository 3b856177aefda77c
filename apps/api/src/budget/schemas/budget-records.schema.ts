import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { ModelProvider } from '@metatronos/shared-types';
import type { TurnSource } from '../../llm/turn-source';

/**
 * A model call's worst-case cost, held while the call runs: the durable trace of
 * the in-process ledger's hold, removed once the call's cost is in the usage
 * rollups. One found at start was left by a crash: it is charged at its worst
 * case (the call may have been billed) and removed.
 */
@Schema({ collection: 'budget_reservations', versionKey: false })
export class BudgetReservationRecord {
  @Prop({ type: String, required: true })
  _id!: string;
  @Prop({ type: String, required: true })
  day!: string;
  @Prop({ type: String, required: true })
  source!: TurnSource;
  @Prop({ type: String, required: true })
  model!: string;
  @Prop({ type: String, required: true })
  provider!: ModelProvider;
  @Prop({ type: Number, required: true })
  costUsd!: number;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const BudgetReservationSchema = SchemaFactory.createForClass(
  BudgetReservationRecord,
);

export const BUDGET_STATE_ID = 'budget';

/** The budget's own state: a pause after a provider's 402, the notices already sent, the models already asked about. */
@Schema({ collection: 'budget_state', versionKey: false })
export class BudgetStateRecord {
  @Prop({ type: String, required: true })
  _id!: string;
  /** Unattended work paused on `day` (the owner's), until the next day or a resume. */
  @Prop({ type: Object, default: null })
  paused!: { since: Date; day: string; reason: string } | null;
  /** `<cap>|<period>|<percent>` of every notice sent. */
  @Prop({ type: [String], default: [] })
  notices!: string[];
  /** Unpriced models the owner was asked about in a chat. */
  @Prop({ type: [String], default: [] })
  askedPrices!: string[];
}

export const BudgetStateSchema =
  SchemaFactory.createForClass(BudgetStateRecord);
