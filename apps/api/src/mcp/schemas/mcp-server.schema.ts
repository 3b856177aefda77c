import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { McpServerKind } from '@metatronos/shared-types';

/**
 * The owner's MCP servers. Feature-owned and hidden from db_query (collection-access.ts):
 * the model can neither read the headers and variables (secrets) nor add, approve or
 * change a server. Only the owner's REST routes write here.
 */
export const MCP_SERVERS_COLLECTION = 'mcp_servers';

@Schema({
  collection: MCP_SERVERS_COLLECTION,
  versionKey: false,
  // An empty env or headers map is kept as {}, not dropped.
  minimize: false,
})
export class McpServerRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true, unique: true })
  name!: string;
  @Prop({ type: String, required: true })
  kind!: McpServerKind;
  @Prop({ type: String, default: null })
  command!: string | null;
  @Prop({ type: [String], default: [] })
  args!: string[];
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  env!: Record<string, string>;
  @Prop({ type: String, default: null })
  url!: string | null;
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  headers!: Record<string, string>;
  @Prop({ type: [String], default: [] })
  allowHosts!: string[];
  @Prop({ type: Boolean, default: true })
  enabled!: boolean;
  /** StoredMcpTool[] as JSON: a schema's `$ref`/`$defs` keys cannot be document fields. */
  @Prop({ type: String, default: '[]' })
  toolsJson!: string;
  /** The server has listed its tools once (that first list is approved by the owner adding it). */
  @Prop({ type: Boolean, default: false })
  listedOnce!: boolean;
  @Prop({ type: Date, required: true })
  createdAt!: Date;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const McpServerSchema = SchemaFactory.createForClass(McpServerRecord);
