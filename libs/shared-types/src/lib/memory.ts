/**
 * Memory notes: short facts with where they came from. The 4,000-character core memory
 * (`save_memory`) stays as it is; notes are searched (`memory_search`, `GET /api/memories`)
 * and the few that match an owner's message are recalled into that turn's prompt.
 */

/** Who said the fact: the owner, a contact, an email, a web page, or a tool's output. */
export const MEMORY_SOURCES = [
  'owner',
  'contact',
  'email',
  'web',
  'tool',
] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/**
 * `owner`: the owner's own words or approval. `third-party`: said by someone else and
 * not approved yet: such a note is a proposal, never recalled nor searched until the owner approves it.
 */
export type MemoryTrust = 'owner' | 'third-party';

/** `active`: in memory; `proposed`: waits for the owner; `superseded`: replaced by a newer note (kept, ranked below it). */
export type MemoryStatus = 'active' | 'proposed' | 'superseded';

/** One prior version of a note, kept when it is edited, merged or superseded. */
export interface MemoryVersion {
  text: string;
  at: string;
  /** Why it changed, in plain words ("edited by the owner", "merged with a duplicate"). */
  reason: string;
  by: 'owner' | 'ai' | 'consolidation';
}

export interface MemoryNoteView {
  id: string;
  text: string;
  source: MemorySource;
  trust: MemoryTrust;
  status: MemoryStatus;
  /** The chat the fact was said in, and the messages that say it (one click to them in the console). */
  chatId: string | null;
  messageIds: string[];
  observedAt: string;
  /** The note this one replaced, and the one that replaced it. */
  supersedes: string | null;
  supersededBy: string | null;
  /** After this the note is dropped by the nightly consolidation and no longer recalled. */
  expiresAt: string | null;
  history: MemoryVersion[];
  createdAt: string;
  updatedAt: string;
}

/** Who wrote a message found by `memory_search`. */
export type MemoryMessageSource =
  | 'owner'
  | 'assistant'
  | 'contact'
  | 'cron'
  | 'pulse';

/** One hit of `memory_search` and `GET /api/memories?q=`. */
export interface MemorySearchResult {
  kind: 'note' | 'message';
  id: string;
  /** A contact's text comes fenced as third-party content. */
  text: string;
  date: string;
  chatId: string | null;
  messageId?: string;
  source: MemorySource | MemoryMessageSource;
  score: number;
}

/** One change of a consolidation run, with the note's text before it. */
export interface MemoryRunChange {
  noteId: string;
  action: 'merged' | 'expired';
  reason: string;
  /** The note's text before the change (a dropped note's only copy). */
  prior: string;
}

/** The nightly consolidation's latest run: what it changed, or why it changed nothing. */
export interface MemoryRunView {
  id: string;
  startedAt: string;
  outcome: 'done' | 'refused';
  /** `refused`: why (e.g. it would remove more than a quarter of the notes). */
  reason: string | null;
  notesBefore: number;
  changes: MemoryRunChange[];
}

/** `GET /api/memories`: the notes (newest first) or, with `q`, what the search found; and the latest consolidation run. */
export interface MemoryListResponse {
  notes: MemoryNoteView[];
  results?: MemorySearchResult[];
  lastRun?: MemoryRunView | null;
}

/** `PATCH /api/memories/:id`: new text (the prior version is kept), approve a proposal, set or clear the expiry. */
export interface UpdateMemoryRequest {
  text?: string;
  approve?: boolean;
  expiresAt?: string | null;
}

export const MEMORY_NOTE_MAX_LENGTH = 1000;
export const MEMORY_QUERY_MAX_LENGTH = 500;
export const MEMORY_SEARCH_DEFAULT_LIMIT = 10;
export const MEMORY_SEARCH_MAX_LIMIT = 50;
