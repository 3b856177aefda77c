import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { ModelProvider, UsageSource } from '@metatronos/shared-types';

/**
 * The tokens of one day, source and model, added up reply by reply. The `_id` is
 * `<day>|<source>|<model>`, so recording is one `$inc` upsert on `_id` (the only
 * key FerretDB 1.x looks up by index) and a range of days is a range of `_id`s.
 * Feature-owned: the AI can read it, never write it.
 */
@Schema({ collection: 'usage', versionKey: false })
export class UsageRollupRecord {
  @Prop({ type: String, required: true })
  _id!: string;
  /** `YYYY-MM-DD` in the owner's time zone when the call ended. */
  @Prop({ type: String, required: true })
  day!: string;
  @Prop({ type: String, required: true })
  source!: UsageSource;
  @Prop({ type: String, required: true })
  model!: string;
  @Prop({ type: String, required: true })
  provider!: ModelProvider;
  @Prop({ type: Number, default: 0 })
  inputTokens!: number;
  @Prop({ type: Number, default: 0 })
  outputTokens!: number;
  @Prop({ type: Number, default: 0 })
  turns!: number;
  /** USD from the reported tokens at the model's price when the call ended (0 for an unpriced model). */
  @Prop({ type: Number, default: 0 })
  costUsd!: number;
}

export const UsageRollupSchema =
  SchemaFactory.createForClass(UsageRollupRecord);

export function usageRollupId(
  day: string,
  source: UsageSource,
  model: string,
): string {
  return `${day}|${source}|${model}`;
}
