/**
 * Email (IMAP + SMTP) and calendar (CalDAV) accounts: `/api/accounts`.
 * Passwords never leave the server: every response shows PASSWORD_MASK in their place.
 */

export const ACCOUNT_KINDS = ['email', 'calendar'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/** What every response shows for a stored password (never any of its characters). */
export const PASSWORD_MASK = '••••••••';

/** One mail server connection (IMAP or SMTP). `secure: false` = plain (or STARTTLS where offered): chosen explicitly only. */
export interface MailServerSettings {
  host: string;
  port: number;
  /** true = TLS from the first byte (IMAPS 993, SMTPS 465). */
  secure: boolean;
  user: string;
}

export interface MailServerView extends MailServerSettings {
  /** Always PASSWORD_MASK. */
  password: string;
}

export interface MailServerInput extends MailServerSettings {
  password: string;
}

export interface EmailAccountView {
  id: string;
  kind: 'email';
  name: string;
  address: string;
  imap: MailServerView;
  smtp: MailServerView;
  createdAt: string;
  updatedAt: string;
}

export interface CalendarAccountView {
  id: string;
  kind: 'calendar';
  name: string;
  /** The CalDAV server (or principal) URL; calendars are discovered from it. */
  url: string;
  user: string;
  /** Always PASSWORD_MASK. */
  password: string;
  /** false when the owner chose a plain `http://` URL. */
  secure: boolean;
  /** What `select_account` matches besides name and id: the user name. */
  address: string;
  createdAt: string;
  updatedAt: string;
}

export type AccountView = EmailAccountView | CalendarAccountView;

export interface CreateEmailAccountRequest {
  kind: 'email';
  name: string;
  address: string;
  imap: MailServerInput;
  smtp: MailServerInput;
}

export interface CreateCalendarAccountRequest {
  kind: 'calendar';
  name: string;
  /** `https://…`; a plain `http://` URL is accepted only with `secure: false` chosen explicitly. */
  url: string;
  user: string;
  password: string;
  /** Omitted: true (TLS). `false` allows a plain `http://` CalDAV URL. */
  secure?: boolean;
}

export type CreateAccountRequest =
  | CreateEmailAccountRequest
  | CreateCalendarAccountRequest;

/**
 * `PATCH /api/accounts/:id`: any subset of the create fields of the account's kind
 * (`kind` cannot change). An omitted or masked password keeps the stored one. A change
 * to a connection is tested before it is stored (400 naming the problem otherwise).
 */
export interface UpdateAccountRequest {
  name?: string;
  address?: string;
  imap?: Partial<MailServerInput>;
  smtp?: Partial<MailServerInput>;
  url?: string;
  user?: string;
  password?: string;
  secure?: boolean;
}

/** `POST /api/accounts/test` (a create body, nothing stored) and `POST /api/accounts/:id/test`. */
export interface AccountTestResult {
  ok: true;
  /** What was checked, in words: "IMAP and SMTP logins succeeded", "3 calendars found". */
  detail: string;
}

/** `GET /api/accounts/presets`: server settings of common providers to start a form from. */
export interface AccountPreset {
  id: string;
  label: string;
  kind: AccountKind;
  imap?: Omit<MailServerSettings, 'user'>;
  smtp?: Omit<MailServerSettings, 'user'>;
  /** CalDAV URL (may hold `{user}` for the user name). */
  url?: string;
  /** A hint shown with the preset (e.g. "use an app password"). */
  note?: string;
}

export const EMAIL_DRAFT_ACTIONS = ['send', 'reply'] as const;
export type EmailDraftAction = (typeof EMAIL_DRAFT_ACTIONS)[number];
export type EmailDraftStatus = 'pending' | 'sent' | 'failed';

/**
 * A message the AI wrote in an unattended turn (job, Pulse, auto-reply): held until
 * the owner sends or discards it. `GET /api/drafts`, `POST /api/drafts/:id/send`,
 * `DELETE /api/drafts/:id`.
 */
/** The mail a reply draft answers: its subject and sender. */
export interface EmailDraftRepliesTo {
  subject: string;
  from: string;
}

export interface EmailDraftView {
  id: string;
  accountId: string;
  /** The sending account's address (or its id when the account is gone). */
  accountAddress: string;
  action: EmailDraftAction;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  /** For replies: the Message-ID replied to (threading headers are set from it). */
  inReplyTo: string | null;
  /** Who wrote it: `cron`, `pulse` or `auto-reply`. */
  source: string;
  /** The chat of the turn that wrote it, when there is one. */
  chatId: string | null;
  /** For `cron`: the job whose run wrote it, and its name then (kept after the job is renamed or deleted). */
  jobId: string | null;
  jobName: string | null;
  /** For replies: the mail it answers, as the owner would recognise it. */
  repliesTo: EmailDraftRepliesTo | null;
  status: EmailDraftStatus;
  /** Why the last send failed. */
  error: string | null;
  createdAt: string;
  sentAt: string | null;
}

/** `PATCH /api/drafts/:id`: the owner edits a pending draft before sending it. */
export interface UpdateEmailDraftRequest {
  to?: string[];
  cc?: string[];
  subject?: string;
  text?: string;
}
