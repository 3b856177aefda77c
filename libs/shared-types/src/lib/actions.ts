/**
 * Pending actions: a tool call that waits for the owner's approval instead of running.
 *
 * One policy decides, for every tool call, whether it runs, waits here, or is refused:
 * unattended runs (jobs, Pulse, mail-triggered jobs, auto-replies) never act outward on
 * their own unless the owner allowed that tool for that job; a turn that has read
 * third-party content (a web page, an email, a contact's message…) waits before it sends,
 * grants, deletes, schedules or remembers; "always confirm" makes an attended turn wait
 * before it sends or deletes.
 */

/** Where the turn that proposed the action came from (`mcp`: another agent of the owner's, through `/mcp`; `memory`: the memory's own upkeep). */
export type ActionSource =
  | 'chat'
  | 'cron'
  | 'pulse'
  | 'auto-reply'
  | 'voice'
  | 'mcp'
  | 'memory';

export type ActionStatus =
  | 'pending'
  | 'running'
  | 'done'
  | 'failed'
  | 'discarded'
  | 'expired';

/** What kind of outward effect a tool call has (how the policy classes it). */
export type ActionEffect =
  | 'send'
  | 'grant'
  | 'delete'
  | 'move'
  | 'schedule'
  | 'memory'
  | 'fetch';

/** Why a call waits, in words the console shows ("this turn read a web page from example.org"). */
export interface ActionReason {
  /** `spoken`: a send or deletion in a voice call, which a spoken yes (confirm_action) may approve. */
  kind: 'unattended' | 'tainted' | 'always-confirm' | 'spoken';
  /** Plain words for the owner. */
  text: string;
}

/** What marked a turn as having read third-party content. */
export interface TaintMark {
  /** The tool whose result marked the turn (`url_fetch`, `email_actions`…), or `contact-message`. */
  by: string;
  /** Plain words: "a web page from example.org", "an email from ann@example.org". */
  text: string;
  at: string;
}

export interface PendingActionView {
  id: string;
  /** The tool name as the model called it. */
  tool: string;
  /** Exactly what would happen, in plain words: to whom, which text, which event. */
  summary: string;
  /** The validated arguments that approve runs, unchanged unless the owner edited them. */
  arguments: Record<string, unknown>;
  chatId: string | null;
  /** The assistant message whose turn proposed it (the chat shows the action inline there). */
  messageId: string | null;
  /** The job that proposed it, for cron and mail-triggered runs. */
  jobId: string | null;
  source: ActionSource;
  /** Whether the turn had read third-party content. */
  tainted: boolean;
  /** What marked the turn, when tainted. */
  taint: TaintMark[];
  reason: ActionReason;
  effect: ActionEffect;
  status: ActionStatus;
  /** The tool's answer after approve (`done`) or the error (`failed`). */
  result: unknown;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  /** Pending actions expire 24 h after they were made. */
  expiresAt: string;
}

export interface ActionsQuery {
  status?: ActionStatus;
  chatId?: string;
  limit?: number;
}

/** `PATCH /api/actions/:id`: the owner's edit of a pending action's arguments (checked by the tool's schema). */
export interface EditActionRequest {
  arguments: Record<string, unknown>;
}

/** `POST /api/actions/:id/approve` answers this once the call ran. */
export interface ApproveActionResponse {
  status: 'done' | 'failed';
  result: unknown;
  error?: string;
}

/** The tool result a waiting call gives the model. */
export interface PendingToolResult {
  pending: true;
  actionId: string;
  summary: string;
}

/** Pending actions expire after this long. */
export const PENDING_ACTION_TTL_MS = 24 * 60 * 60 * 1000;

/** One run (a job run, a pulse, an auto-reply turn) sends to people at most this many times, whatever the tool. */
export const MAX_SENDS_PER_UNATTENDED_RUN = 3;
