import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { BudgetService, type GuardedCall } from '../budget/budget.service';
import type { ModelRoute } from '../settings/model-route';
import { UsageRecorder } from '../usage/usage-recorder';
import type { LlmAdapter, LlmConnection } from './llm-adapter';
import { guardStalls } from './stall-guard';
import type { TurnSource } from './turn-source';

const MAX_CACHED = 20;

/**
 * Makes the adapter for a model's provider; an OpenAI-compatible endpoint is
 * named by its own name in errors. Adapters hold no per-turn state, so one per
 * provider, key and base URL is reused (the SDK clients are not free to build).
 * Every adapter ends a turn whose provider goes silent (LLM_STALL_TIMEOUT_MS).
 */
@Injectable()
export class LlmAdapterFactory {
  private readonly adapters = new Map<string, LlmAdapter>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly usage: UsageRecorder,
    private readonly budget: BudgetService,
  ) {}

  /**
   * The adapter every model call goes through: the budget's reservation around
   * each call (outermost, so it settles after the usage is written), the usage
   * meter, the stall guard, the provider.
   */
  forCall(
    model: { id: string; route: ModelRoute; connection: LlmConnection },
    call: { source: TurnSource } & Omit<
      GuardedCall,
      'source' | 'modelId' | 'provider'
    >,
  ): LlmAdapter {
    const metered = this.usage.meter(
      this.create(model.route, model.connection),
      {
        source: call.source,
        model: model.id,
        provider: model.route.provider,
      },
    );
    return this.budget.guard(metered, {
      ...call,
      modelId: model.id,
      provider: model.route.provider,
    });
  }

  /** The bare provider adapter (stall guard only): no usage, no budget. Model calls go through `forCall`. */
  private create(route: ModelRoute, connection: LlmConnection): LlmAdapter {
    const key = JSON.stringify([
      route.provider,
      route.endpoint ?? '',
      connection.apiKey,
      connection.baseUrl ?? '',
      baseUrlEnv(route),
    ]);
    let adapter = this.adapters.get(key);
    if (!adapter) {
      const name =
        route.provider === 'gemini'
          ? 'Gemini'
          : route.provider === 'openai'
            ? 'OpenAI'
            : (route.endpoint ?? 'OpenAI-compatible endpoint');
      // The stall guard starts once the SDK is loaded: the first turn's load is not a silent provider.
      adapter = loadedOnFirstTurn(async () =>
        guardStalls(
          route.provider === 'gemini'
            ? new (await import('./adapters/gemini-adapter')).GeminiAdapter(
                connection,
              )
            : new (await import('./adapters/openai-adapter')).OpenAiAdapter(
                connection,
                name,
              ),
          this.config.llm.stallTimeoutMs,
          name,
        ),
      );
      if (this.adapters.size >= MAX_CACHED) this.adapters.clear();
      this.adapters.set(key, adapter);
    }
    return adapter;
  }
}

/**
 * The provider SDKs (about 0.15 s of start-up together) load with the first turn
 * that needs them, not at boot; the adapter is built once.
 */
function loadedOnFirstTurn(build: () => Promise<LlmAdapter>): LlmAdapter {
  let adapter: Promise<LlmAdapter> | undefined;
  return {
    streamTurn: async (request, sink) =>
      (await (adapter ??= build())).streamTurn(request, sink),
  };
}

/** The SDKs' own base-URL variables are read when a client is built, so they are part of its identity. */
function baseUrlEnv(route: ModelRoute): string {
  return (
    (route.provider === 'gemini'
      ? process.env['GOOGLE_GEMINI_BASE_URL']
      : process.env['OPENAI_BASE_URL']) ?? ''
  );
}
