/**
 * The owner's MCP servers (Model Context Protocol): each one a mode `mcp_<name>` whose
 * tools the model calls as `<name>_<tool>`, after the owner approved their definitions.
 */

/** `[a-z0-9_]{1,24}`: the mode is `mcp_<name>`, the tools `<name>_<tool>`. */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9_]{1,24}$/;

/** A tool result the model receives is cut at this many bytes. */
export const MCP_RESULT_MAX_BYTES = 256 * 1024;

/** A call that sets no other limit is abandoned after this long. */
export const MCP_CALL_TIMEOUT_MS = 30_000;

export type McpServerKind = 'stdio' | 'http';

/**
 * connecting → ready (n tools) | error (in plain words; retried with backoff) | stopped
 * (disabled by the owner) | needs-sign-in (an HTTP server asks for OAuth: the owner signs in
 * from the console; not retried until then).
 */
export type McpServerState =
  | 'connecting'
  | 'ready'
  | 'error'
  | 'stopped'
  | 'needs-sign-in';

/** An HTTP server's OAuth sign-in as the console shows it: never a token, only its masked form. */
export interface McpOAuthView {
  /** Tokens are stored (the server may still ask again if they were revoked). */
  signedIn: boolean;
  /** The authorization server the tokens and the client registration are bound to. */
  issuer: string | null;
  /** `••••abcd`, or null when signed out. */
  accessToken: string | null;
  /** A refresh token is held: an expired access token is renewed without the owner. */
  refreshable: boolean;
  /** When the access token expires, if the authorization server said. */
  expiresAt: string | null;
  scope: string | null;
  /** A sign-in was started and waits for the authorization server's redirect. */
  pending: boolean;
}

/**
 * `POST /api/mcp/servers/:id/sign-in`: the authorization server's page to open in a new
 * tab (null when the stored tokens were renewed without one), and the server.
 */
export interface McpSignInStarted {
  authorizationUrl: string | null;
  server: McpServerView;
}

export interface McpServerStatus {
  state: McpServerState;
  /** Plain words: "ready with 3 tools", "the command 'foo' was not found". */
  message: string;
  /** Tools the server lists now (0 until ready). */
  toolCount: number;
  /** The HTTP transport that answered: Streamable HTTP, or the old SSE one as a fallback. */
  transport: 'stdio' | 'streamable-http' | 'sse' | null;
  /** A stdio server runs inside bubblewrap (false when bwrap is not usable here). */
  sandboxed: boolean | null;
  /** Restarts after a crash or a failed start since the last success. */
  restarts: number;
  /** When the next attempt is due after an error, if one is. */
  retryAt: string | null;
  at: string;
}

/** One side of a tool definition the owner approves: what the model would read and send. */
export interface McpToolDefinition {
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server's hints (readOnlyHint, destructiveHint…): shown, never trusted. */
  annotations: Record<string, unknown> | null;
}

/** Why a tool is not offered until the owner approves it again. */
export type McpToolChange = 'new' | 'changed' | null;

export interface McpToolView {
  /** The tool's name on the server. */
  name: string;
  /** What the model calls: `<server>_<tool>` (cut and made unique when the server's name does not fit). */
  fullName: string;
  /** The definition the server lists now (null: the server no longer lists it). */
  current: McpToolDefinition | null;
  /** The definition the owner approved (null: never approved). */
  approvedDefinition: McpToolDefinition | null;
  /** The current definition is the approved one (same hash). */
  approved: boolean;
  /** The owner's switch: a disabled tool is never offered. */
  enabled: boolean;
  /** The owner marked it safe for unattended runs (jobs, Pulse, auto-replies). */
  unattended: boolean;
  /** New since the last approval, or changed after it (the difference is approved vs current). */
  change: McpToolChange;
  /** Offered to the model: listed now, approved, enabled, and the server ready. */
  offered: boolean;
}

export interface McpServerView {
  id: string;
  name: string;
  /** `mcp_<name>` */
  mode: string;
  kind: McpServerKind;
  command: string | null;
  args: string[];
  /** Values masked like keys (`••••abcd`). */
  env: Record<string, string>;
  url: string | null;
  /** Values masked like keys. */
  headers: Record<string, string>;
  /** `host:port` entries the owner allows although private (a home server): checked like url_fetch's. */
  allowHosts: string[];
  enabled: boolean;
  status: McpServerStatus;
  /** OAuth 2.1 sign-in of an HTTP server (null for stdio servers). */
  oauth: McpOAuthView | null;
  tools: McpToolView[];
  createdAt: string;
  updatedAt: string;
}

export interface CreateMcpServerRequest {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  allowHosts?: string[];
  enabled?: boolean;
}

/** A tool's owner switches, by its name on the server (or its full name). */
export interface McpToolSwitches {
  enabled?: boolean;
  unattended?: boolean;
}

export interface UpdateMcpServerRequest {
  command?: string;
  args?: string[];
  /** Replaces the map; a value sent back masked keeps the stored one. */
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  allowHosts?: string[];
  enabled?: boolean;
  tools?: Record<string, McpToolSwitches>;
}

/** `{}`: approve every tool waiting; `tools`: one name or a list (names on the server or full names). */
export interface ApproveMcpToolsRequest {
  tools?: string | string[];
}
