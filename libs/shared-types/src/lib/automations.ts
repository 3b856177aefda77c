import type { TokenUsage } from './chats';

/** Scheduled jobs (`/api/cronjobs`) and the Pulse heartbeat (`/api/pulse`). */

export const CRONJOB_NAME_MAX_LENGTH = 200;
export const CRONJOB_INSTRUCTION_MAX_LENGTH = 10_000;
export const CRON_EXPRESSION_MAX_LENGTH = 200;
/** Pulse continuity notes longer than this are cut to it, silently (the seed's rule). */
export const PULSE_NOTES_MAX_LENGTH = 2_000;
export const PULSES_PER_DAY_CHOICES = [48, 24, 12, 6, 2] as const;
export type PulsesPerDay = (typeof PULSES_PER_DAY_CHOICES)[number];
/** At most this many quiet-hour ranges. */
export const QUIET_HOURS_MAX_RANGES = 10;
/** How many upcoming run times a job view carries. */
export const CRONJOB_NEXT_RUNS = 3;

/** How a run ended. `running` while it runs; `skipped` (reason `busy`) and `missed` never ran the model. */
export const RUN_OUTCOMES = [
  'running',
  'success',
  'error',
  'skipped',
  'missed',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];
/** What started a run: its schedule, the owner's "Run now", the catch-up at start for a run due while the app was down, or new mail (a mail-triggered job). */
export const RUN_TRIGGERS = ['schedule', 'manual', 'catch-up', 'mail'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const AUTOMATION_KINDS = ['cron', 'pulse'] as const;
export type AutomationKind = (typeof AUTOMATION_KINDS)[number];

export type CronJobCreator = 'owner' | 'ai';

/** The folder a mail trigger watches unless another is given. */
export const MAIL_TRIGGER_DEFAULT_FOLDER = 'INBOX';
export const MAIL_TRIGGER_FOLDER_MAX_LENGTH = 200;

/** "Run when new mail arrives in this folder of this email account" (instead of a schedule). */
export interface MailTriggerInput {
  /** An email account (`GET /api/accounts`). */
  accountId: string;
  /** Default MAIL_TRIGGER_DEFAULT_FOLDER. */
  folder?: string;
}

export interface MailTriggerView {
  accountId: string;
  folder: string;
  /** The account's address; null when the account was deleted. */
  address: string | null;
}

export const MAIL_WATCH_STATES = ['connecting', 'watching', 'error'] as const;
export type MailWatchState = (typeof MAIL_WATCH_STATES)[number];

/** How the watch of a mail-triggered job's folder is doing (never holds a password). */
export interface MailWatchView {
  state: MailWatchState;
  /** Why it is in `error` (or reconnecting), in plain words; null while all is well. */
  reason: string | null;
}

/** `GET /api/cronjobs` items and the answer to create/update. */
export interface CronJobView {
  id: string;
  name: string;
  instruction: string;
  /** The schedule; null for a job run by new mail (`mailTrigger`). A job has exactly one of the two. */
  cronExpression: string | null;
  /** Runs once per new message in this folder; null for a scheduled job. */
  mailTrigger: MailTriggerView | null;
  /** The watch of the folder (null for a scheduled or paused job). */
  mailWatch: MailWatchView | null;
  enabled: boolean;
  /** The mode each run starts in (its tools and prompt sections); `default` unless chosen. */
  mode: string;
  /** The job's own chat, where every run writes its turn. */
  chatId: string | null;
  /** The schedule in words ("At 08:00, Monday through Friday"). */
  description: string;
  /** The next run times (ISO, up to CRONJOB_NEXT_RUNS); empty while paused or when the expression is invalid. */
  nextRuns: string[];
  /** The owner's timezone the expression is read in. */
  timezone: string;
  /** Why the job cannot be scheduled: an invalid expression, or a document stored in a shape the scheduler cannot run. */
  scheduleError: string | null;
  /** Who made the job: the owner (console, REST) or the AI (manage_cronjob, db_query); null for jobs stored before this was recorded. */
  createdBy: CronJobCreator | null;
  lastRun: CronRunView | null;
  /** Runs that failed one after another; reset by a success. */
  consecutiveFailures: number;
  /** True once consecutiveFailures reaches the alert threshold (CRON_FAILURE_ALERT_AFTER). */
  failing: boolean;
  running: boolean;
  /**
   * Tools this job may use on its own (send, delete, move) without a pending action for the
   * owner to approve; empty by default. Granting tools are never offered to a job.
   */
  actOnOwnTools?: string[];
  /** Tool rounds one run may use (1–100, default 20); a run that needs more stops with reason `max-rounds`. */
  maxRounds: number;
  /** Tokens (input + output over all its model calls) one run may use (1,000–10,000,000, default 200,000); reason `max-tokens`. */
  maxTokensPerRun: number;
  createdAt: string;
  updatedAt: string;
}

/** Exactly one trigger: `cronExpression` (a schedule) or `mailTrigger` (new mail). */
export interface CreateCronJobRequest {
  name: string;
  instruction: string;
  cronExpression?: string | null;
  mailTrigger?: MailTriggerInput | null;
  enabled?: boolean;
  /** The mode each run starts in (one of `GET /api/tools` modes); default `default`. */
  mode?: string;
  /** Replaces the list of tools the job may use on its own (see `CronJobView.actOnOwnTools`). */
  actOnOwnTools?: string[];
  /** See `CronJobView.maxRounds`; a number or a numeric string. */
  maxRounds?: number;
  /** See `CronJobView.maxTokensPerRun`; a number or a numeric string. */
  maxTokensPerRun?: number;
}

/** Any of the create fields; giving one trigger switches the job to it (the other is cleared). */
export type UpdateCronJobRequest = Partial<CreateCronJobRequest>;

/** One run of a job or one pulse (`GET /api/cronjobs/:id/runs`, `GET /api/pulse/runs`, newest first). */
export interface CronRunView {
  id: string;
  kind: AutomationKind;
  /** The job (null for a pulse). */
  jobId: string | null;
  trigger: RunTrigger;
  outcome: RunOutcome;
  /** When the schedule said it should run (null for a manual run). */
  dueAt: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  /**
   * `busy` for a skipped run; the count of missed times for `missed`; `budget` for a run the
   * spend caps stopped; `max-rounds` / `max-tokens` for a run stopped at its job's limit.
   */
  reason: string | null;
  error: string | null;
  /** Where the run's turn is: the chat and the assistant message. */
  chatId: string | null;
  messageId: string | null;
  usage: TokenUsage | null;
}

/** `GET /api/cronjobs/:id/runs` and `GET /api/pulse/runs` query. */
export interface RunsQuery {
  /** 1 to 100, default 20. */
  limit?: number;
  /** A run id: the runs started before it (older page). */
  before?: string;
}

/** `GET /api/cronjobs/preview` query. */
export interface CronPreviewQuery {
  cronExpression: string;
}

/** `GET /api/cronjobs/preview?cronExpression=…`: what the form shows while the owner types. */
export interface CronPreview {
  valid: boolean;
  /** Why it is refused (null when valid). */
  error: string | null;
  description: string | null;
  nextRuns: string[];
  timezone: string;
}

export interface QuietHoursRange {
  /** `HH:mm`, local time, inclusive. */
  start: string;
  /** `HH:mm`, exclusive; a range whose end is not after its start crosses midnight. */
  end: string;
}

/** The seed's PulseSettings, camelCase. */
export interface PulseSettings {
  enabled: boolean;
  /** 0 = Sunday … 6 = Saturday. */
  activeDays: number[];
  pulsesPerDay: PulsesPerDay;
  quietHours: QuietHoursRange[];
  /** The AI's continuity notes for its next pulse. */
  notes: string;
  /** The mode every pulse starts in (one of `GET /api/tools` modes); default `automations`. */
  mode: string;
}

/** `GET /api/pulse`: the settings plus what the server computes. */
export interface PulseView extends PulseSettings {
  remaining: number;
  nextPulseAt: string | null;
  intervalMinutes: number;
  pulsesToday: number;
  lastPulseAt: string | null;
  /** The dedicated Pulse chat (null until the first pulse). */
  chatId: string | null;
  running: boolean;
  timezone: string;
  notesUpdatedAt: string | null;
}

export type UpdatePulseRequest = Partial<PulseSettings>;
