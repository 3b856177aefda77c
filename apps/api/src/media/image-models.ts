import type { TokenUsage } from '@metatronos/shared-types';
import { routeModel, type ModelRoute } from '../settings/model-route';
import type { AppSettings } from '../settings/settings.service';

/** One image request: a new image from a prompt, or an edit of `source`. */
export interface ImageRequest {
  prompt: string;
  source?: { bytes: Buffer; mime: string };
  /** The tool's signal (Stop, turn and tool timeouts) joined with IMAGE_TIMEOUT_MS. */
  signal: AbortSignal;
  timeoutMs: number;
}

export interface ImageModel {
  /** The configured id, e.g. `gpt-image-1`, `gemini-2.5-flash-image`, `local/sdxl`. */
  readonly id: string;
  /** The image bytes (whatever format the provider chose). Throws LlmProviderError with a readable message. */
  run(request: ImageRequest): Promise<ImageResult>;
}

export interface ImageResult {
  bytes: Buffer;
  /** The tokens the provider reported (null: it reported none, so the budget charges the worst case). */
  usage: TokenUsage | null;
}

/**
 * The most output tokens one image costs: gpt-image-1 at high quality and 1536×1024
 * is 6,240 (Gemini's images are 1,290). The budget holds this before a request.
 */
export const IMAGE_WORST_OUTPUT_TOKENS = 6_240;

export interface ImageRoute {
  route: ModelRoute;
  apiKey: string;
  baseUrl?: string;
  providerName: string;
}

/** `dall-e-*` is an OpenAI image model the chat router does not know; everything else routes like a chat model. */
export function routeImageModel(id: string): ModelRoute | null {
  if (/^dall-e-[A-Za-z0-9.-]{1,40}$/.test(id))
    return { provider: 'openai', model: id };
  return routeModel(id);
}

/** The image model's route and key from the settings; throws an Error the model can read when it cannot run. */
export function resolveImageModel(
  settings: AppSettings,
): ImageRoute & { id: string } {
  const id = settings.imageModel;
  if (!id)
    throw new Error(
      'No image model is configured: the owner can choose one in Settings.',
    );
  const route = routeImageModel(id);
  if (!route) {
    throw new Error(
      `The image model '${id}' is not a Gemini id (gemini-…), an OpenAI id (gpt-image-…, dall-e-…) or '<endpoint>/<model>'; the owner can change it in Settings.`,
    );
  }
  if (route.provider === 'gemini') {
    if (!settings.geminiApiKey)
      throw new Error(
        `No Gemini API key is set for the image model '${id}': the owner can add one in Settings.`,
      );
    return { id, route, apiKey: settings.geminiApiKey, providerName: 'Gemini' };
  }
  if (route.provider === 'openai') {
    if (!settings.openaiApiKey)
      throw new Error(
        `No OpenAI API key is set for the image model '${id}': the owner can add one in Settings.`,
      );
    return { id, route, apiKey: settings.openaiApiKey, providerName: 'OpenAI' };
  }
  const endpoint = settings.openaiCompatible.find(
    (e) => e.name === route.endpoint,
  );
  if (!endpoint)
    throw new Error(
      `The endpoint '${route.endpoint}' of the image model '${id}' is not configured: the owner can add it in Settings.`,
    );
  return {
    id,
    route,
    apiKey: endpoint.apiKey ?? '',
    baseUrl: endpoint.baseUrl,
    providerName: endpoint.name,
  };
}

/** The provider SDKs (about 0.15 s of start-up together) load with the first image, not at boot. */
export async function createImageModel(
  resolved: ImageRoute & { id: string },
): Promise<ImageModel> {
  return (await import('./image-providers')).providerImageModel(resolved);
}
