import {
  DEFAULT_MODEL_PRICES,
  type ModelPrice,
  type ModelProvider,
  type TokenUsage,
} from '@metatronos/shared-types';

/** A model's price as the guard uses it; `null` price: a cloud model nobody priced (refused for unattended work). */
export type PriceLookup = { price: ModelPrice; shipped: boolean } | null;

const FREE: ModelPrice = { model: '*', inputPerMTok: 0, outputPerMTok: 0 };

/**
 * A version suffix: a date, a build number, `latest`, a preview or experiment. Any
 * other suffix names another model (`gpt-5-pro` is not `gpt-5`), which must not
 * borrow a cheaper model's price.
 */
const VERSION_SUFFIX =
  /^-(\d{4}-\d{2}-\d{2}|\d{2,4}|\d{2}-\d{4}|latest|(?:preview|exp)(?:-[a-z0-9]+)*)$/;

/**
 * The price of `modelId`: the owner's entry, else the shipped one, matched exactly
 * or as the longest entry the id starts with followed by a version suffix (dated
 * versions such as `gpt-4.1-mini-2025-04-14`, `gemini-2.5-flash-preview-09-2025`). An OpenAI-compatible endpoint's model costs 0
 * unless the owner priced it; an unknown cloud model has no price (`null`).
 */
export function priceFor(
  modelId: string,
  provider: ModelProvider,
  ownerPrices: readonly ModelPrice[],
): PriceLookup {
  const own = bestMatch(modelId, ownerPrices);
  if (own) return { price: own, shipped: false };
  if (provider === 'openai-compatible') return { price: FREE, shipped: true };
  const shipped = bestMatch(modelId, DEFAULT_MODEL_PRICES);
  return shipped ? { price: shipped, shipped: true } : null;
}

function bestMatch(
  modelId: string,
  prices: readonly ModelPrice[],
): ModelPrice | null {
  const id = modelId.toLowerCase();
  let best: ModelPrice | null = null;
  for (const price of prices) {
    const key = price.model.toLowerCase();
    if (key === id) return price;
    if (
      id.startsWith(key) &&
      VERSION_SUFFIX.test(id.slice(key.length)) &&
      (!best || key.length > best.model.length)
    )
      best = price;
  }
  return best;
}

/**
 * USD for the tokens a call reported: cached input at its own price where reported,
 * audio (a voice call) at the audio prices where the model has them. Cached tokens
 * the provider did not split are taken as text first (text is the cheaper kind).
 */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const input = nonNegative(usage.inputTokens);
  const cached = Math.min(input, nonNegative(usage.cachedInputTokens));
  const audioIn = Math.min(input, nonNegative(usage.audioInputTokens));
  const textIn = input - audioIn;
  const cachedAudio = Math.min(
    cached,
    audioIn,
    usage.cachedAudioInputTokens !== undefined
      ? nonNegative(usage.cachedAudioInputTokens)
      : Math.max(0, cached - textIn),
  );
  const cachedText = Math.min(textIn, cached - cachedAudio);
  const output = nonNegative(usage.outputTokens);
  const audioOut = Math.min(output, nonNegative(usage.audioOutputTokens));
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  return (
    ((textIn - cachedText) * price.inputPerMTok +
      (audioIn - cachedAudio) *
        (price.audioInputPerMTok ?? price.inputPerMTok) +
      (cachedText + cachedAudio) * cachedPrice +
      (output - audioOut) * price.outputPerMTok +
      audioOut * (price.audioOutputPerMTok ?? price.outputPerMTok)) /
    1_000_000
  );
}

/**
 * USD for a call's worst case: every prompt token uncached, the whole output limit
 * used; for `audio` (a voice response) each token at the dearer of its text and
 * audio prices, since the call may speak or write.
 */
export function worstCaseCost(
  promptTokens: number,
  outputLimit: number,
  price: ModelPrice,
  audio = false,
): number {
  const input = audio
    ? Math.max(price.inputPerMTok, price.audioInputPerMTok ?? 0)
    : price.inputPerMTok;
  const output = audio
    ? Math.max(price.outputPerMTok, price.audioOutputPerMTok ?? 0)
    : price.outputPerMTok;
  return (promptTokens * input + outputLimit * output) / 1_000_000;
}

function nonNegative(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? value
    : 0;
}

/**
 * An upper estimate of the tokens of a prompt of `utf8Bytes` bytes: tokenizers
 * give about 4 bytes of English per token and 3 bytes (one character) of CJK, so
 * 3 bytes per token is above the count for real text.
 */
export function promptTokensOf(utf8Bytes: number): number {
  return Math.ceil(utf8Bytes / 3);
}

/** What an attached file counts as (images: a high-detail image's tokens; PDFs: a page per 3 KB at 258 tokens, text at the byte rate). */
export function attachmentTokens(
  kind: 'image' | 'pdf' | 'text' | 'unavailable',
  bytes: number,
): number {
  if (kind === 'image') return 1_600;
  if (kind === 'pdf')
    return Math.max(1_600, Math.ceil(bytes / 3_000) * 258 * 2);
  if (kind === 'text') return promptTokensOf(bytes);
  return 0;
}
