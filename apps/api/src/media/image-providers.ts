import { ApiError, GoogleGenAI, type Part } from '@google/genai';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  toFile,
} from 'openai';
import {
  cleanProviderMessage,
  connectError,
  hostOf,
  isAbortFailure,
  isNetworkFailure,
  statusError,
  unknownError,
  type ProviderContext,
} from '../llm/adapters/adapter-support';
import {
  fetchFallback,
  parseGeminiError,
} from '../llm/adapters/gemini-adapter';
import { LlmProviderError } from '../llm/llm-adapter';
import type {
  ImageModel,
  ImageRequest,
  ImageResult,
  ImageRoute,
} from './image-models';

/** The image model on its provider's SDK: only `createImageModel` loads this file, at the first image. */
export function providerImageModel(
  resolved: ImageRoute & { id: string },
): ImageModel {
  return resolved.route.provider === 'gemini'
    ? new GeminiImageModel(resolved)
    : new OpenAiImageModel(resolved);
}

function timedOut(
  provider: ProviderContext,
  timeoutMs: number,
): LlmProviderError {
  return new LlmProviderError(
    'network',
    `${provider.name} did not finish the image within ${Math.round(timeoutMs / 1000)} s (${provider.host}).`,
  );
}

function stopped(provider: ProviderContext): LlmProviderError {
  return new LlmProviderError(
    'aborted',
    `The ${provider.name} image request was stopped.`,
  );
}

/** Abort or timeout: which one, from the caller's signal (the timeout is part of it). */
function abortError(
  provider: ProviderContext,
  request: ImageRequest,
): LlmProviderError {
  const reason: unknown = request.signal.reason;
  const isTimeout =
    (reason as { name?: unknown } | null)?.name === 'TimeoutError';
  return isTimeout ? timedOut(provider, request.timeoutMs) : stopped(provider);
}

/** OpenAI `images.generate` / `images.edit` (and OpenAI-compatible servers), reading `b64_json`. */
class OpenAiImageModel implements ImageModel {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly provider: ProviderContext;
  private readonly model: string;
  /** gpt-image models always answer base64 and refuse `response_format`; DALL·E and most local servers default to URLs. */
  private readonly askForBase64: boolean;

  constructor(resolved: ImageRoute & { id: string }) {
    this.id = resolved.id;
    this.model = resolved.route.model;
    const baseURL =
      resolved.baseUrl?.trim() ||
      process.env['OPENAI_BASE_URL']?.trim() ||
      undefined;
    this.client = new OpenAI({
      apiKey: resolved.apiKey || 'no-key',
      baseURL,
      maxRetries: 0,
    });
    this.provider = {
      name: resolved.providerName,
      host: hostOf(this.client.baseURL),
      apiKey: resolved.apiKey,
    };
    this.askForBase64 =
      resolved.route.provider === 'openai-compatible'
        ? !this.model.startsWith('gpt-image')
        : this.model.startsWith('dall-e');
  }

  async run(request: ImageRequest): Promise<ImageResult> {
    const options = { signal: request.signal, timeout: request.timeoutMs };
    const format = this.askForBase64
      ? { response_format: 'b64_json' as const }
      : {};
    try {
      const response = request.source
        ? await this.client.images.edit(
            {
              model: this.model,
              image: await toFile(
                request.source.bytes,
                `image.${extensionOf(request.source.mime)}`,
                { type: request.source.mime },
              ),
              prompt: request.prompt,
              n: 1,
              ...format,
            },
            options,
          )
        : await this.client.images.generate(
            { model: this.model, prompt: request.prompt, n: 1, ...format },
            options,
          );
      const b64 = response.data?.[0]?.b64_json;
      if (!b64)
        throw new LlmProviderError(
          'bad-request',
          `${this.provider.name} answered without image data.`,
        );
      const usage = response.usage;
      return {
        bytes: Buffer.from(b64, 'base64'),
        usage: usage
          ? {
              inputTokens: usage.input_tokens,
              outputTokens: usage.output_tokens,
              totalTokens: usage.total_tokens,
            }
          : null,
      };
    } catch (error) {
      throw this.toError(error, request);
    }
  }

  private toError(error: unknown, request: ImageRequest): LlmProviderError {
    const provider = this.provider;
    if (error instanceof LlmProviderError) return error;
    if (
      request.signal.aborted ||
      error instanceof APIUserAbortError ||
      isAbortFailure(error)
    )
      return abortError(provider, request);
    if (error instanceof APIConnectionTimeoutError)
      return timedOut(provider, request.timeoutMs);
    if (error instanceof APIConnectionError)
      return connectError(provider, error);
    if (error instanceof APIError && typeof error.status === 'number') {
      const body = error.error as { message?: unknown } | undefined;
      return statusError(
        provider,
        error.status,
        typeof body?.message === 'string' ? body.message : error.message,
      );
    }
    if (isNetworkFailure(error)) return connectError(provider, error);
    return unknownError(provider, error);
  }
}

/** Gemini `generateContent` with image output, reading the first `inlineData` part. */
class GeminiImageModel implements ImageModel {
  readonly id: string;
  private readonly apiKey: string;
  private readonly model: string;
  private readonly baseUrl: string;
  private readonly provider: ProviderContext;

  constructor(resolved: ImageRoute & { id: string }) {
    this.id = resolved.id;
    this.apiKey = resolved.apiKey;
    this.model = resolved.route.model;
    this.baseUrl =
      process.env['GOOGLE_GEMINI_BASE_URL']?.trim() ||
      'https://generativelanguage.googleapis.com';
    this.provider = {
      name: resolved.providerName,
      host: hostOf(this.baseUrl),
      apiKey: resolved.apiKey,
    };
  }

  async run(request: ImageRequest): Promise<ImageResult> {
    const ai = new GoogleGenAI({
      apiKey: this.apiKey,
      vertexai: false,
      httpOptions: {
        baseUrl: this.baseUrl,
        timeout: request.timeoutMs,
        ...fetchFallback(),
      },
    });
    const parts: Part[] = [
      ...(request.source
        ? [
            {
              inlineData: {
                mimeType: request.source.mime,
                data: request.source.bytes.toString('base64'),
              },
            },
          ]
        : []),
      { text: request.prompt },
    ];
    try {
      const response = await ai.models.generateContent({
        model: this.model,
        contents: [{ role: 'user', parts }],
        config: {
          responseModalities: ['IMAGE', 'TEXT'],
          abortSignal: request.signal,
        },
      });
      if (request.signal.aborted) throw abortError(this.provider, request);
      const candidate = response.candidates?.[0];
      const image = candidate?.content?.parts?.find(
        (part) =>
          part.inlineData?.data &&
          part.inlineData.mimeType?.startsWith('image/'),
      );
      if (image?.inlineData?.data) {
        const meta = response.usageMetadata;
        return {
          bytes: Buffer.from(image.inlineData.data, 'base64'),
          usage: meta
            ? {
                inputTokens: meta.promptTokenCount ?? 0,
                outputTokens:
                  (meta.candidatesTokenCount ?? 0) +
                  (meta.thoughtsTokenCount ?? 0),
                totalTokens: meta.totalTokenCount ?? 0,
                ...(meta.cachedContentTokenCount
                  ? { cachedInputTokens: meta.cachedContentTokenCount }
                  : {}),
              }
            : null,
        };
      }
      const said = (candidate?.content?.parts ?? [])
        .map((part) => (part.thought ? '' : (part.text ?? '')))
        .join(' ')
        .trim();
      const why =
        response.promptFeedback?.blockReason ??
        (candidate?.finishReason && candidate.finishReason !== 'STOP'
          ? candidate.finishReason
          : null);
      const detail = [
        why ? ` (${why})` : '',
        said ? `: ${cleanProviderMessage(said, this.apiKey)}` : '',
      ].join('');
      throw new LlmProviderError(
        'bad-request',
        `${this.provider.name} answered without an image${detail || '.'}`,
      );
    } catch (error) {
      throw this.toError(error, request);
    }
  }

  private toError(error: unknown, request: ImageRequest): LlmProviderError {
    const provider = this.provider;
    if (error instanceof LlmProviderError) return error;
    if (request.signal.aborted || isAbortFailure(error))
      return abortError(provider, request);
    if (error instanceof ApiError) {
      const { message, reason } = parseGeminiError(error.message);
      if (
        error.status === 400 &&
        (reason === 'API_KEY_INVALID' || /API key not valid/i.test(message))
      ) {
        return new LlmProviderError(
          'auth',
          `The ${provider.name} API key was rejected (400).`,
          400,
        );
      }
      return statusError(provider, error.status, message);
    }
    if (isNetworkFailure(error)) return connectError(provider, error);
    return unknownError(provider, error);
  }
}

function extensionOf(mime: string): string {
  return mime === 'image/jpeg' ? 'jpg' : mime === 'image/webp' ? 'webp' : 'png';
}
