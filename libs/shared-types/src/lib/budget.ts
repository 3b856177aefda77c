import type { UsageSource } from './usage';

/** Spend control: model prices, caps, reservations (`/api/budget`, `modelPrices` and `budget` in Settings). */

/** The most a price (USD per million tokens) or a cap (USD) may be. */
export const BUDGET_MAX_USD = 10_000;

/** A model's price in USD per million tokens. */
export interface ModelPrice {
  /** A model id as configured (`gpt-4.1-mini`, `gemini-2.5-flash`, `local/llama3`); also matches dated versions (`gpt-4.1-mini-2025-04-14`). */
  model: string;
  inputPerMTok: number;
  /** Input tokens the provider served from its cache; default: the input price. */
  cachedInputPerMTok?: number;
  outputPerMTok: number;
  audioInputPerMTok?: number;
  audioOutputPerMTok?: number;
}

/**
 * Prices shipped with the app (USD per MTok, the providers' list prices for prompts up to
 * 200k tokens). An owner's entry for the same model wins. Models of an OpenAI-compatible
 * endpoint cost 0 unless the owner prices them.
 */
export const DEFAULT_MODEL_PRICES: readonly ModelPrice[] = [
  {
    model: 'gpt-5',
    inputPerMTok: 1.25,
    cachedInputPerMTok: 0.125,
    outputPerMTok: 10,
  },
  {
    model: 'gpt-5-mini',
    inputPerMTok: 0.25,
    cachedInputPerMTok: 0.025,
    outputPerMTok: 2,
  },
  {
    model: 'gpt-5-nano',
    inputPerMTok: 0.05,
    cachedInputPerMTok: 0.005,
    outputPerMTok: 0.4,
  },
  {
    model: 'gpt-4.1',
    inputPerMTok: 2,
    cachedInputPerMTok: 0.5,
    outputPerMTok: 8,
  },
  {
    model: 'gpt-4.1-mini',
    inputPerMTok: 0.4,
    cachedInputPerMTok: 0.1,
    outputPerMTok: 1.6,
  },
  {
    model: 'gpt-4.1-nano',
    inputPerMTok: 0.1,
    cachedInputPerMTok: 0.025,
    outputPerMTok: 0.4,
  },
  {
    model: 'gpt-4o',
    inputPerMTok: 2.5,
    cachedInputPerMTok: 1.25,
    outputPerMTok: 10,
  },
  {
    model: 'gpt-4o-mini',
    inputPerMTok: 0.15,
    cachedInputPerMTok: 0.075,
    outputPerMTok: 0.6,
  },
  { model: 'o3', inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
  {
    model: 'o3-mini',
    inputPerMTok: 1.1,
    cachedInputPerMTok: 0.55,
    outputPerMTok: 4.4,
  },
  {
    model: 'o4-mini',
    inputPerMTok: 1.1,
    cachedInputPerMTok: 0.275,
    outputPerMTok: 4.4,
  },
  {
    model: 'gpt-realtime',
    inputPerMTok: 4,
    cachedInputPerMTok: 0.4,
    outputPerMTok: 16,
    audioInputPerMTok: 32,
    audioOutputPerMTok: 64,
  },
  {
    model: 'gpt-4o-mini-realtime',
    inputPerMTok: 0.6,
    cachedInputPerMTok: 0.3,
    outputPerMTok: 2.4,
    audioInputPerMTok: 10,
    audioOutputPerMTok: 20,
  },
  {
    model: 'gemini-3-pro',
    inputPerMTok: 2,
    cachedInputPerMTok: 0.2,
    outputPerMTok: 12,
  },
  {
    model: 'gemini-2.5-pro',
    inputPerMTok: 1.25,
    cachedInputPerMTok: 0.125,
    outputPerMTok: 10,
  },
  {
    model: 'gemini-2.5-flash',
    inputPerMTok: 0.3,
    cachedInputPerMTok: 0.03,
    outputPerMTok: 2.5,
    audioInputPerMTok: 1,
  },
  {
    model: 'gemini-2.5-flash-lite',
    inputPerMTok: 0.1,
    cachedInputPerMTok: 0.01,
    outputPerMTok: 0.4,
    audioInputPerMTok: 0.3,
  },
  {
    model: 'gemini-2.5-flash-native-audio',
    inputPerMTok: 0.5,
    outputPerMTok: 2,
    audioInputPerMTok: 3,
    audioOutputPerMTok: 12,
  },
  { model: 'gemini-2.5-flash-image', inputPerMTok: 0.3, outputPerMTok: 30 },
  {
    model: 'gpt-image-1',
    inputPerMTok: 5,
    cachedInputPerMTok: 1.25,
    outputPerMTok: 40,
  },
  {
    model: 'gpt-image-1-mini',
    inputPerMTok: 2,
    cachedInputPerMTok: 0.2,
    outputPerMTok: 8,
  },
  {
    model: 'gemini-2.0-flash',
    inputPerMTok: 0.1,
    cachedInputPerMTok: 0.025,
    outputPerMTok: 0.4,
    audioInputPerMTok: 0.7,
  },
  { model: 'gemini-2.0-flash-lite', inputPerMTok: 0.075, outputPerMTok: 0.3 },
  // Embeddings (memory search): input only.
  { model: 'text-embedding-3-small', inputPerMTok: 0.02, outputPerMTok: 0 },
  { model: 'text-embedding-3-large', inputPerMTok: 0.13, outputPerMTok: 0 },
  { model: 'gemini-embedding-001', inputPerMTok: 0.15, outputPerMTok: 0 },
];

/** Caps in USD; `null`: no cap (an explicit choice). */
export interface BudgetCaps {
  /** Everything spent today (owner's day). */
  dailyUsd: number | null;
  /** Everything spent this calendar month (owner's zone). */
  monthlyUsd: number | null;
  /** What jobs, Pulse and auto-replies spend today. */
  unattendedDailyUsd: number | null;
}

/** A fresh install's caps, and those of an install that never saved any. */
export const DEFAULT_BUDGET: BudgetCaps = {
  dailyUsd: 5,
  monthlyUsd: null,
  unattendedDailyUsd: 1,
};

/** The output limit (`max_tokens` / `maxOutputTokens`) every model call carries, per source. */
export type OutputLimits = Record<UsageSource, number>;

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = {
  chat: 16_384,
  job: 8_192,
  pulse: 4_096,
  'auto-reply': 2_048,
  voice: 4_096,
  memory: 4_096,
};
export const OUTPUT_LIMIT_MIN = 16;
export const OUTPUT_LIMIT_MAX = 200_000;

/** Per job: the tool rounds and the tokens (input + output, all calls) one run may use. */
export const DEFAULT_JOB_MAX_ROUNDS = 20;
export const DEFAULT_JOB_MAX_TOKENS_PER_RUN = 200_000;
export const JOB_MAX_ROUNDS_MIN = 1;
export const JOB_MAX_ROUNDS_MAX = 100;
export const JOB_MAX_TOKENS_PER_RUN_MIN = 1_000;
export const JOB_MAX_TOKENS_PER_RUN_MAX = 10_000_000;

/** `ok` under 80% of every cap; `warning` at 80%; `exceeded` at 100% of one; `paused` after a provider's 402. */
export type BudgetState = 'ok' | 'warning' | 'exceeded' | 'paused';

export type BudgetCapName = keyof BudgetCaps;

/** `GET /api/budget`. */
export interface BudgetView {
  caps: BudgetCaps;
  spent: { todayUsd: number; monthUsd: number; unattendedTodayUsd: number };
  /** Worst-case cost of the model calls under way. */
  reservedUsd: number;
  /** Unattended work paused by a provider's 402 / insufficient quota (until the next day or a resume). */
  paused: { since: string; reason: string } | null;
  state: BudgetState;
  /** The owner's day and month the figures are for. */
  day: string;
  month: string;
  /** This month's spend projected to its end at the pace so far. */
  projectedMonthUsd: number;
}

/** `budget.changed`: a cap reached 80% or 100%, the caps changed, or work was paused or resumed. */
export interface BudgetChangedEvent {
  state: BudgetState;
  /** The cap that crossed a threshold, when one did. */
  cap: BudgetCapName | null;
  /** 80 or 100 when a cap crossed one. */
  percent: 80 | 100 | null;
  /** The notice in plain words (what the owner's own WhatsApp or Telegram chat is sent); null for a plain change. */
  message: string | null;
  at: string;
}
