/**
 * Metatron as an MCP server (`/mcp`, Streamable HTTP) for the owner's other agents:
 * bearer tokens the owner creates and revokes (`/api/mcp/tokens`), each with a tool
 * allow-list taken from the few tools that may ever be exposed.
 */

/** The path of the MCP endpoint, at the root (outside `/api`). */
export const MCP_ENDPOINT_PATH = '/mcp';

/** A token's name: what the owner calls the agent that holds it. */
export const MCP_TOKEN_NAME_MAX_LENGTH = 60;

/** Tokens the owner may hold at once. */
export const MCP_TOKENS_MAX = 50;

/** The longest a token may be given to live, in days (about ten years). */
export const MCP_TOKEN_MAX_DAYS = 3650;

/** The expiry choices the console offers (null: never). */
export const MCP_TOKEN_EXPIRY_CHOICES: readonly (number | null)[] = [
  30,
  90,
  365,
  null,
];

/** Requests one token may make per minute on `/mcp` (429 beyond). */
export const MCP_REQUESTS_PER_MINUTE = 120;

/** A tool the owner may give an agent, as the console's picker shows it. */
export interface McpToolChoice {
  /** The tool's name in Metatron's registry (and over MCP). */
  name: string;
  /** What it lets the agent do, in the owner's words. */
  label: string;
  /** Given to a new token when the request names no tools. */
  byDefault: boolean;
}

/**
 * Every tool that may ever be offered over MCP: read-only views of the owner's data.
 * Anything else (bash, writes, sends, permissions, fetches, paid generation) is
 * refused even when a token asks for it.
 */
export const MCP_TOOL_CHOICES: readonly McpToolChoice[] = [
  {
    name: 'memory_search',
    label: 'Search memory notes and past conversations',
    byDefault: true,
  },
  {
    name: 'read_file',
    label:
      'Read text files, such as the TODO list (file_state_dir/TODO.md); stored secrets are redacted',
    byDefault: true,
  },
  {
    name: 'calendar_actions',
    label: 'List calendar events (only the "list" action)',
    byDefault: true,
  },
  {
    name: 'db_query',
    label:
      'Read the database (find, findOne, countDocuments, aggregate, listCollections only)',
    byDefault: false,
  },
];

/**
 * `POST /api/mcp/tokens`: `tools` may be one name or a list; omitted, the defaults.
 * Expiry: `expiresInDays` (a number or a numeric string, fractions allowed, up to
 * MCP_TOKEN_MAX_DAYS) or `expiresAt` (an ISO date in the future), not both; neither
 * (or null): the token never expires.
 */
export interface CreateMcpTokenRequest {
  name: string;
  tools?: string | string[];
  expiresInDays?: number | string | null;
  expiresAt?: string | null;
}

/** The answer to a create: the only time `token` is shown. */
export interface McpTokenCreated {
  id: string;
  token: string;
  name: string;
  tools: string[];
  /** When it stops working (401 like a revoked one); null: never. */
  expiresAt: string | null;
}

/** A token as `GET /api/mcp/tokens` lists it (never the token itself). */
export interface McpTokenView {
  id: string;
  name: string;
  tools: string[];
  createdAt: string;
  /** When it stops working (401 like a revoked one); null: never. */
  expiresAt: string | null;
  /** It has expired (kept in the list until the owner revokes it). */
  expired: boolean;
  /** The last request made with it; null: never used. */
  lastUsedAt: string | null;
  /** Tool calls made with it. */
  calls: number;
  /** Of those, the ones refused or answered with an error. */
  errors: number;
  /** Tool calls per tool name. */
  callsByTool: Record<string, number>;
}

export interface McpTokenList {
  tokens: McpTokenView[];
  /** What a token may be given. */
  choices: McpToolChoice[];
}
