import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * A bearer token for `/mcp`. Only the SHA-256 of its secret part is kept (the
 * token is 256 random bits, so a plain hash is enough and a copy of the
 * database holds no usable token). `_id` is the id the token carries, the one
 * key FerretDB 1.x looks up by index. An `auth_` collection: invisible to the
 * AI and the data browser.
 */
@Schema({ collection: 'auth_mcp_tokens', versionKey: false })
export class McpTokenRecord {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: String, required: true })
  name!: string;

  /** Hex SHA-256 of the token's secret. */
  @Prop({ type: String, required: true })
  secretHash!: string;

  @Prop({ type: [String], default: [] })
  tools!: string[];

  @Prop({ type: Date, required: true })
  createdAt!: Date;

  @Prop({ type: Date, default: null })
  lastUsedAt!: Date | null;

  /** From then on the token is refused like a revoked one; null: never. */
  @Prop({ type: Date, default: null })
  expiresAt!: Date | null;

  @Prop({ type: Number, default: 0 })
  calls!: number;

  /** Calls refused or answered with an error (`errors` in the API; that name is mongoose's own). */
  @Prop({ type: Number, default: 0 })
  failedCalls!: number;

  /** Tool name → calls (names come from the exposable list only). */
  @Prop({ type: Object, default: {} })
  callsByTool!: Record<string, number>;
}

export const McpTokenSchema = SchemaFactory.createForClass(McpTokenRecord);
