import type { ModelProvider } from './settings';

/** Token usage (`GET /api/usage`) and backups (`/api/backup`). */

/** What started a model call: the owner's chat, a voice call, a scheduled job, a Pulse, an auto-reply to a contact, or memory upkeep (embeddings, the nightly consolidation). */
export const USAGE_SOURCES = [
  'chat',
  'voice',
  'job',
  'pulse',
  'auto-reply',
  'memory',
] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

/** Days a usage query may span (`from` and `to` included). */
export const USAGE_MAX_RANGE_DAYS = 366;
/** Days shown when no range is given (the last 30 days, today included). */
export const USAGE_DEFAULT_RANGE_DAYS = 30;

export interface UsageTokens {
  inputTokens: number;
  outputTokens: number;
  /** Replies (LLM turns, each with all its tool rounds) the provider reported usage for. */
  turns: number;
  /** USD, from the reported tokens and the model's price (cached input at its own price where reported). */
  costUsd: number;
}

export interface UsageDay extends UsageTokens {
  /** `YYYY-MM-DD` in the owner's time zone. */
  day: string;
}

export interface UsageModel extends UsageTokens {
  /** The model id as configured (`gpt-4.1-mini`, `gemini-2.5-flash`, `local/llama3`). */
  model: string;
  provider: ModelProvider;
}

export interface UsageBySource extends UsageTokens {
  source: UsageSource;
}

/** `GET /api/usage?from&to` (both `YYYY-MM-DD`, owner's zone). */
export interface UsageReport {
  from: string;
  to: string;
  timezone: string;
  totals: UsageTokens;
  /** Every day of the range, oldest first (days without turns count 0). */
  byDay: UsageDay[];
  /** Most tokens first. */
  byModel: UsageModel[];
  /** Most tokens first. */
  bySource: UsageBySource[];
}

export interface UsageQuery {
  from?: string;
  to?: string;
}
