import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * OAuth 2.1 state of the owner's HTTP MCP servers, one document per server: the dynamic
 * client registration and the tokens (each stamped by the SDK with the authorization
 * server it is bound to, and never presented to another), and the one sign-in waiting for
 * its redirect (state, PKCE verifier). Hidden from db_query (collection-access.ts), never
 * shown but masked, never given to the model.
 */
export const MCP_OAUTH_COLLECTION = 'mcp_oauth';

@Schema({ collection: MCP_OAUTH_COLLECTION, versionKey: false })
export class McpOAuthRecord {
  _id!: Types.ObjectId;
  @Prop({ type: String, required: true, unique: true })
  serverId!: string;
  /** The authorization server the client and tokens are bound to (as discovery found it). */
  @Prop({ type: String, default: null })
  issuer!: string | null;
  /** OAuthClientInformationMixed as JSON (client_id, client_secret, redirect_uris, issuer). */
  @Prop({ type: String, default: null })
  clientJson!: string | null;
  /** OAuthTokens as JSON (access_token, refresh_token, expires_in, scope, issuer). */
  @Prop({ type: String, default: null })
  tokensJson!: string | null;
  /** When the access token expires (saved time + expires_in). */
  @Prop({ type: Date, default: null })
  expiresAt!: Date | null;
  /** The `state` of the sign-in waiting for its redirect (random, single use). */
  @Prop({ type: String, default: null, index: true })
  pendingState!: string | null;
  @Prop({ type: String, default: null })
  pendingVerifier!: string | null;
  @Prop({ type: String, default: null })
  pendingRedirectUrl!: string | null;
  @Prop({ type: Date, default: null })
  pendingExpiresAt!: Date | null;
  @Prop({ type: Date, required: true })
  updatedAt!: Date;
}

export const McpOAuthSchema = SchemaFactory.createForClass(McpOAuthRecord);
