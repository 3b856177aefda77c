/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/**
 * Public list prices of well-known models (standard tier, text, prompts under
 * 200k tokens), per million tokens, as published by OpenAI and Google in 2025.
 * Only for an estimate: providers change prices, bill cached input, long prompts,
 * images and "thinking" tokens differently, and offer discounts.
 */
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
};

/**
 * The list price of a model id: an exact entry, or one followed by a dated or
 * preview suffix (`gpt-4o-2024-08-06`, `gemini-2.5-flash-preview-05-20`). Models
 * of an OpenAI-compatible endpoint (`<endpoint>/<model>`) have no known price.
 */
export function priceOf(model: string): ModelPrice | null {
  if (model.includes('/')) return null;
  const exact = MODEL_PRICES[model];
  if (exact) return exact;
  let best: string | null = null;
  for (const key of Object.keys(MODEL_PRICES)) {
    if (!model.startsWith(`${key}-`)) continue;
    const rest = model.slice(key.length + 1);
    if (!/^(\d|preview|latest|exp)/.test(rest)) continue;
    if (!best || key.length > best.length) best = key;
  }
  return best ? MODEL_PRICES[best] : null;
}

/** Estimated cost in US dollars, or null when the model's price is not known. */
export function estimateCost(
  model: string,
  inputTokens: number,
  outputTokens: number,
): number | null {
  const price = priceOf(model);
  if (!price) return null;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}

/** `$0.0042`, `$1.23`, `$1,234.50`, `<$0.0001`: enough digits for small sums. */
export function formatUsd(value: number): string {
  if (value === 0) return '$0.00';
  if (value < 0.0001) return '<$0.0001';
  const digits = value < 0.01 ? 4 : value < 1 ? 3 : 2;
  return `$${value.toLocaleString('en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: digits,
  })}`;
}
