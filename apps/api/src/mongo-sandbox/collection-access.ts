import {
  AI_COLLECTION_PREFIX,
  AI_MANAGED_COLLECTIONS,
  PROTECTED_COLLECTIONS,
  type CollectionAccess,
} from '@metatronos/shared-types';

export const MAX_COLLECTION_NAME_LENGTH = 120;

/** Holds the owner's API keys: readable by the AI, but never its secret fields. */
export const SETTINGS_COLLECTION = 'settings';

/** Prefix of feature-owned credential collections (owner password, sessions…): invisible to the AI and the console. */
export const HIDDEN_COLLECTION_PREFIX = 'auth_';

/** A field whose name looks like a credential (`geminiApiKey`, `openaiCompatible.apiKey`, `token`…). */
export const SECRET_FIELD_PATTERN = /api.?key|secret|token|password/i;

/** Feature-owned collections the AI may neither read nor write (what waits for the owner's approval). */
const HIDDEN_COLLECTIONS: ReadonlySet<string> = new Set([
  'pending_actions',
  'pending_action_claims',
  // The owner's MCP servers: their headers and variables are secrets, their approvals the owner's.
  'mcp_servers',
  // Their OAuth client registrations, tokens and PKCE verifiers.
  'mcp_oauth',
]);

const PROTECTED = new Set(PROTECTED_COLLECTIONS);
const AI_MANAGED = new Set(AI_MANAGED_COLLECTIONS);

export type CollectionVisibility = CollectionAccess | 'hidden';

/**
 * How the AI (and the console's data browser) may use a collection:
 * `hidden` for credentials and server internals, `read-write` for AI-managed
 * and `ai_*` collections, `read-only` for everything else.
 */
export function collectionAccess(name: string): CollectionVisibility {
  if (
    name.startsWith(HIDDEN_COLLECTION_PREFIX) ||
    name.startsWith('system.') ||
    HIDDEN_COLLECTIONS.has(name)
  )
    return 'hidden';
  return isAiWritableCollection(name) ? 'read-write' : 'read-only';
}

export function isProtectedCollection(name: string): boolean {
  return PROTECTED.has(name);
}

export function isAiWritableCollection(name: string): boolean {
  return (
    AI_MANAGED.has(name) ||
    (name.startsWith(AI_COLLECTION_PREFIX) &&
      name.length > AI_COLLECTION_PREFIX.length)
  );
}

/** Why a value cannot name a collection in this database, or null when it can. */
export function collectionNameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return 'a collection name must be a string';
  if (name === '') return 'a collection name must not be empty';
  if (name.length > MAX_COLLECTION_NAME_LENGTH)
    return `a collection name is at most ${MAX_COLLECTION_NAME_LENGTH} characters`;
  if (name.startsWith('system.'))
    return "names starting with 'system.' are reserved by the server";
  if (name.includes('\0')) return 'a collection name must not contain NUL';
  if (name.includes('$')) return "a collection name must not contain '$'";
  if (name.includes('.'))
    return "a collection name must not contain '.' (other databases and sub-namespaces are out of reach)";
  return null;
}

export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD_PATTERN.test(name);
}
