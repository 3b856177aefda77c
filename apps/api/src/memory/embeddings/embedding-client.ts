// The SDKs load with the first embedding, not at start (docs/architecture.md, start-up).
import type { GoogleGenAI } from '@google/genai';
import type OpenAI from 'openai';
import type { TokenUsage } from '@metatronos/shared-types';
import type { MemoryEmbeddingsConfig } from '../../config/app-config';
import type { AppSettings } from '../../settings/settings.service';

/**
 * Dimensions asked of every model: both providers shorten their vectors on request
 * (OpenAI `dimensions`, Gemini `outputDimensionality`). 256 keeps 100,000 vectors at
 * 26 MB in memory and a brute-force search in tens of milliseconds, for a small loss of
 * quality against the full size.
 */
export const EMBEDDING_DIMENSIONS = 256;
/** A text's characters sent at most (about 500 tokens): a long message's start says what it is about. */
export const EMBEDDING_TEXT_MAX = 2000;

/** The embedding model the owner's keys allow, as the budget and usage name it. */
export interface EmbeddingModel {
  provider: 'openai' | 'gemini';
  /** The provider's model id; also the id usage and the budget count it under. */
  model: string;
  dimensions: number;
  apiKey: string;
}

export interface EmbeddingResult {
  vectors: Float32Array[];
  /** What the provider reported (OpenAI), or an estimate from the text's length (Gemini reports none). */
  usage: TokenUsage;
}

const MODELS = {
  openai: 'text-embedding-3-small',
  gemini: 'gemini-embedding-001',
} as const;

/** The model the settings and MEMORY_EMBEDDINGS allow, or null (keyword search only). */
export function embeddingModelFor(
  settings: Pick<AppSettings, 'openaiApiKey' | 'geminiApiKey'>,
  config: MemoryEmbeddingsConfig,
): EmbeddingModel | null {
  const use = (provider: 'openai' | 'gemini', apiKey: string | null) =>
    apiKey
      ? {
          provider,
          model: MODELS[provider],
          dimensions: EMBEDDING_DIMENSIONS,
          apiKey,
        }
      : null;
  switch (config.mode) {
    case 'off':
      return null;
    case 'openai':
      return use('openai', settings.openaiApiKey);
    case 'gemini':
      return use('gemini', settings.geminiApiKey);
    default:
      return (
        use('openai', settings.openaiApiKey) ??
        use('gemini', settings.geminiApiKey)
      );
  }
}

/** The same model with the same key and size: a vector made by one is comparable with the other's. */
export function sameModel(a: EmbeddingModel, b: EmbeddingModel): boolean {
  return (
    a.provider === b.provider &&
    a.model === b.model &&
    a.dimensions === b.dimensions
  );
}

/** Tokens a text is counted as before the provider says (about four characters a token). */
export function estimateTokens(texts: readonly string[]): number {
  return texts.reduce((sum, t) => sum + Math.ceil(t.length / 4) + 1, 0);
}

let openaiClient: { key: string; client: OpenAI } | null = null;

/**
 * Embeds `texts` through the provider's own SDK (`embeddings.create`, `models.embedContent`);
 * `query` marks a search's text (Gemini embeds questions and documents differently).
 * Throws the SDK's error; the caller decides what a failure means.
 */
export async function embedTexts(
  model: EmbeddingModel,
  texts: readonly string[],
  purpose: 'document' | 'query',
  signal: AbortSignal,
  timeoutMs: number,
): Promise<EmbeddingResult> {
  if (model.provider === 'openai') {
    const baseURL = process.env['OPENAI_BASE_URL']?.trim() || undefined;
    const key = `${model.apiKey}\n${baseURL ?? ''}`;
    // One client per key and host: a search's query embedding should not build one each time.
    if (openaiClient?.key !== key) {
      const { default: OpenAIClient } = await import('openai');
      openaiClient = {
        key,
        client: new OpenAIClient({
          apiKey: model.apiKey,
          baseURL,
          maxRetries: 0,
        }),
      };
    }
    const response = await openaiClient.client.embeddings.create(
      {
        model: model.model,
        input: [...texts],
        dimensions: model.dimensions,
      },
      { signal, timeout: timeoutMs },
    );
    const vectors = [...response.data]
      .sort((a, b) => a.index - b.index)
      .map((d) => Float32Array.from(d.embedding));
    return {
      vectors: checked(vectors, texts.length, model.dimensions),
      usage: {
        inputTokens: response.usage?.prompt_tokens ?? estimateTokens(texts),
        outputTokens: 0,
      },
    };
  }
  const { GoogleGenAI: GoogleGenAIClient } = await import('@google/genai');
  // Imported here, not at the top: the adapter's module loads the Gemini SDK, which costs start-up time.
  const { fetchFallback } = await import('../../llm/adapters/gemini-adapter');
  const ai: GoogleGenAI = new GoogleGenAIClient({
    apiKey: model.apiKey,
    vertexai: false,
    httpOptions: {
      baseUrl:
        process.env['GOOGLE_GEMINI_BASE_URL']?.trim() ||
        'https://generativelanguage.googleapis.com',
      timeout: timeoutMs,
      ...fetchFallback(),
    },
  });
  const response = await ai.models.embedContent({
    model: model.model,
    contents: texts.map((text) => ({ parts: [{ text }] })),
    config: {
      outputDimensionality: model.dimensions,
      taskType: purpose === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT',
      abortSignal: signal,
    },
  });
  const vectors = (response.embeddings ?? []).map((e) =>
    Float32Array.from(e.values ?? []),
  );
  return {
    vectors: checked(vectors, texts.length, model.dimensions),
    usage: { inputTokens: estimateTokens(texts), outputTokens: 0 },
  };
}

function checked(
  vectors: Float32Array[],
  count: number,
  dimensions: number,
): Float32Array[] {
  if (vectors.length !== count)
    throw new Error(
      `The embedding provider answered ${vectors.length} vectors for ${count} texts`,
    );
  for (const v of vectors)
    if (v.length !== dimensions)
      throw new Error(
        `The embedding provider answered ${v.length} dimensions, not ${dimensions}`,
      );
  return vectors;
}
