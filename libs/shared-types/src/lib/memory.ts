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

/** A message a note or a change rests on (one click to it in its chat). */
export interface MemoryChangeSource {
  chatId: string | null;
  messageId: string;
}

/**
 * One change of a consolidation run, with the note's text before it. `merged`: a duplicate
 * (the same words, or with the model a paraphrase) folded into `relatedNoteId`; `expired`:
 * dropped at its expiry; `superseded`: a contradiction resolved by recency (the newer note,
 * `relatedNoteId`, replaces it; the older stays as history with its sources); `proposed`: a
 * new fact from the owner's own words in the day's chats, waiting for the owner's approval.
 */
export interface MemoryRunChange {
  noteId: string;
  action: 'merged' | 'expired' | 'superseded' | 'proposed';
  reason: string;
  /** The note's text before the change (a dropped note's only copy); '' for a proposal. */
  prior: string;
  /** The text after it: the note merged into, the newer note, the proposal. */
  after?: string;
  relatedNoteId?: string | null;
  /** The messages behind the change (both notes' for a merge or a contradiction). */
  sources?: MemoryChangeSource[];
  /** `rules`: the plain-text pass; `model`: proposed by the model and checked. */
  by?: 'rules' | 'model';
}

/** The model part of a run: `done`; `skipped` (no model, or the budget refused: `modelReason`); `failed` (provider error or an answer outside the schema: `error`, nothing of it applied). */
export type MemoryRunModelOutcome = 'done' | 'skipped' | 'failed';

/** The nightly consolidation's latest run: what it changed, or why it changed nothing. */
export interface MemoryRunView {
  id: string;
  startedAt: string;
  outcome: 'done' | 'refused';
  /** `refused`: why (e.g. it would remove more than a quarter of the notes). */
  reason: string | null;
  notesBefore: number;
  changes: MemoryRunChange[];
  modelOutcome: MemoryRunModelOutcome;
  /** Why the model part was skipped (no model chosen, the budget's refusal, nothing to look at). */
  modelReason: string | null;
  /** Why the model part failed; nothing it proposed was applied. */
  error: string | null;
  /** `schedule`: the nightly run at 03:00 in the owner's zone; `owner`: run now from the console. */
  trigger: 'schedule' | 'owner';
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
