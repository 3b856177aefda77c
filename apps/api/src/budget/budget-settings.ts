import {
  BUDGET_MAX_USD,
  DEFAULT_BUDGET,
  DEFAULT_OUTPUT_LIMITS,
  OUTPUT_LIMIT_MAX,
  OUTPUT_LIMIT_MIN,
  USAGE_SOURCES,
  type BudgetCaps,
  type ModelPrice,
  type OutputLimits,
} from '@metatronos/shared-types';

/** The spend settings as stored and used: the owner's prices, the caps, the output limits. */
export interface SpendSettings {
  modelPrices: ModelPrice[];
  budget: BudgetCaps;
  outputLimits: OutputLimits;
}

const CAP_NAMES = ['dailyUsd', 'monthlyUsd', 'unattendedDailyUsd'] as const;
const PRICE_FIELDS = [
  'inputPerMTok',
  'cachedInputPerMTok',
  'outputPerMTok',
  'audioInputPerMTok',
  'audioOutputPerMTok',
] as const;
const REQUIRED_PRICE_FIELDS = new Set(['inputPerMTok', 'outputPerMTok']);
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/;
export const MAX_MODEL_PRICES = 200;

/** A number as people and forms send it: a finite number, or a string holding one ("5", "0.25"). */
function amount(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value))
    return Number(value);
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function usd(value: unknown, field: string, problems: string[]): number | null {
  const n = amount(value);
  if (n === null || n < 0 || n > BUDGET_MAX_USD) {
    problems.push(
      `${field} must be a number from 0 to ${BUDGET_MAX_USD.toLocaleString('en-US')} (USD)${value === null ? '' : `, got ${JSON.stringify(value)?.slice(0, 40)}`}`,
    );
    return null;
  }
  return n;
}

/** The caps after a PATCH's `budget` (omitted caps kept, `null` removes one); problems name each bad field. */
export function nextBudget(
  input: unknown,
  current: BudgetCaps,
  problems: string[],
): BudgetCaps {
  if (!isRecord(input)) {
    problems.push(
      'budget must be an object such as { "dailyUsd": 5, "monthlyUsd": null, "unattendedDailyUsd": 1 }',
    );
    return current;
  }
  const next = { ...current };
  for (const key of Object.keys(input))
    if (!(CAP_NAMES as readonly string[]).includes(key))
      problems.push(
        `budget.${key.slice(0, 40)} is not a cap (dailyUsd, monthlyUsd, unattendedDailyUsd)`,
      );
  for (const cap of CAP_NAMES) {
    if (!(cap in input) || input[cap] === undefined) continue;
    const value = input[cap];
    if (value === null) next[cap] = null;
    else {
      const n = usd(value, `budget.${cap}`, problems);
      if (n !== null) next[cap] = n;
    }
  }
  return next;
}

/** The owner's price list after a PATCH's `modelPrices` (it replaces the list). */
export function nextModelPrices(
  input: unknown,
  problems: string[],
): ModelPrice[] {
  if (!Array.isArray(input)) {
    problems.push(
      'modelPrices must be a list such as [{ "model": "gpt-4.1-mini", "inputPerMTok": 0.4, "outputPerMTok": 1.6 }]',
    );
    return [];
  }
  if (input.length > MAX_MODEL_PRICES) {
    problems.push(`modelPrices may hold at most ${MAX_MODEL_PRICES} entries`);
    return [];
  }
  const seen = new Set<string>();
  const prices: ModelPrice[] = [];
  input.forEach((entry: unknown, i) => {
    const at = `modelPrices[${i}]`;
    if (!isRecord(entry)) {
      problems.push(
        `${at} must be an object with model, inputPerMTok and outputPerMTok`,
      );
      return;
    }
    const model =
      typeof entry['model'] === 'string' ? entry['model'].trim() : '';
    if (!MODEL_ID.test(model)) {
      problems.push(
        `${at}.model must be a model id such as gpt-4.1-mini or local/llama3`,
      );
      return;
    }
    if (seen.has(model.toLowerCase()))
      problems.push(`modelPrices has two entries for '${model}'`);
    seen.add(model.toLowerCase());
    for (const key of Object.keys(entry))
      if (key !== 'model' && !(PRICE_FIELDS as readonly string[]).includes(key))
        problems.push(`${at}.${key.slice(0, 40)} is not a price field`);
    const price: ModelPrice = { model, inputPerMTok: 0, outputPerMTok: 0 };
    for (const field of PRICE_FIELDS) {
      const value = entry[field];
      if (
        value === undefined ||
        (value === null && !REQUIRED_PRICE_FIELDS.has(field))
      ) {
        if (REQUIRED_PRICE_FIELDS.has(field))
          problems.push(`${at}.${field} is required (USD per million tokens)`);
        continue;
      }
      const n = usd(value, `${at}.${field}`, problems);
      if (n !== null) price[field] = n;
    }
    prices.push(price);
  });
  return prices;
}

/** Output limits after a PATCH's `outputLimits` (omitted sources kept). */
export function nextOutputLimits(
  input: unknown,
  current: OutputLimits,
  problems: string[],
): OutputLimits {
  if (!isRecord(input)) {
    problems.push(
      'outputLimits must be an object such as { "chat": 16384, "job": 8192 }',
    );
    return current;
  }
  const next = { ...current };
  for (const key of Object.keys(input)) {
    if (!(USAGE_SOURCES as readonly string[]).includes(key)) {
      problems.push(
        `outputLimits.${key.slice(0, 40)} is not a source (${USAGE_SOURCES.join(', ')})`,
      );
      continue;
    }
    const n = amount(input[key]);
    if (
      n === null ||
      !Number.isInteger(n) ||
      n < OUTPUT_LIMIT_MIN ||
      n > OUTPUT_LIMIT_MAX
    )
      problems.push(
        `outputLimits.${key} must be a whole number of tokens from ${OUTPUT_LIMIT_MIN} to ${OUTPUT_LIMIT_MAX}`,
      );
    else next[key as keyof OutputLimits] = n;
  }
  return next;
}

/**
 * The spend settings as stored. A missing `budget` (a fresh install, or one from
 * before caps existed) gets the default caps: an unbounded bill is the very risk
 * caps are for, so "no cap" is only ever an explicit `null` the owner saved.
 */
export function storedSpendSettings(
  stored:
    | {
        modelPrices?: unknown;
        budget?: unknown;
        outputLimits?: unknown;
      }
    | null
    | undefined,
): SpendSettings {
  const ignore: string[] = [];
  const budget = isRecord(stored?.budget)
    ? nextBudget(
        Object.fromEntries(
          CAP_NAMES.filter((cap) => cap in (stored.budget as object)).map(
            (cap) => [cap, (stored.budget as Record<string, unknown>)[cap]],
          ),
        ),
        DEFAULT_BUDGET,
        ignore,
      )
    : { ...DEFAULT_BUDGET };
  return {
    modelPrices: Array.isArray(stored?.modelPrices)
      ? nextModelPrices(stored.modelPrices, ignore)
      : [],
    budget,
    outputLimits: isRecord(stored?.outputLimits)
      ? nextOutputLimits(
          Object.fromEntries(
            Object.entries(stored.outputLimits).filter(([k]) =>
              (USAGE_SOURCES as readonly string[]).includes(k),
            ),
          ),
          DEFAULT_OUTPUT_LIMITS,
          ignore,
        )
      : { ...DEFAULT_OUTPUT_LIMITS },
  };
}
