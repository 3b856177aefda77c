import type { ModelProvider } from '@metatronos/shared-types';

export interface ModelRoute {
  provider: ModelProvider;
  /** The provider's own model name. */
  model: string;
  /** For `openai-compatible`: the endpoint's name. */
  endpoint?: string;
}

const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$/;

/**
 * Routes a model id to its provider: `gemini-*` → Gemini, `gpt-*` / `o*` → OpenAI,
 * `<endpoint>/<model>` → that OpenAI-compatible endpoint. `null` when it fits none.
 */
export function routeModel(id: string): ModelRoute | null {
  const slash = id.indexOf('/');
  if (slash > 0) {
    const endpoint = id.slice(0, slash);
    const model = id.slice(slash + 1);
    // Model names of local servers may hold further slashes (e.g. `library/llama3`).
    if (
      !/^[A-Za-z0-9_-]{1,40}$/.test(endpoint) ||
      !/^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/.test(model)
    )
      return null;
    return { provider: 'openai-compatible', model, endpoint };
  }
  if (!MODEL_NAME.test(id)) return null;
  if (id.startsWith('gemini-')) return { provider: 'gemini', model: id };
  if (id.startsWith('gpt-') || id.startsWith('chatgpt-') || /^o\d/.test(id))
    return { provider: 'openai', model: id };
  return null;
}

export const MODEL_ID_HELP =
  "a Gemini id (gemini-…), an OpenAI id (gpt-…, o1…, o3…, o4…) or '<endpoint>/<model>' for an OpenAI-compatible endpoint";
