import { Injectable } from '@nestjs/common';
import type { ModelRoute } from '../settings/model-route';
import { GeminiAdapter } from './adapters/gemini-adapter';
import { OpenAiAdapter } from './adapters/openai-adapter';
import type { LlmAdapter, LlmConnection } from './llm-adapter';

/** Makes the adapter for a model's provider; an OpenAI-compatible endpoint is named by its own name in errors. */
@Injectable()
export class LlmAdapterFactory {
  create(route: ModelRoute, connection: LlmConnection): LlmAdapter {
    if (route.provider === 'gemini') return new GeminiAdapter(connection);
    return new OpenAiAdapter(connection, route.provider === 'openai' ? 'OpenAI' : (route.endpoint ?? 'OpenAI-compatible endpoint'));
  }
}
