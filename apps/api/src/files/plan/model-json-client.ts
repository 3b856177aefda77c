import { Injectable } from '@nestjs/common';
import { LlmAdapterFactory } from '../../llm/llm-adapter.factory';
import { resolveModel } from '../../llm/llm-runner';
import { TurnError } from '../../llm/llm-errors';
import type { AppSettings } from '../../settings/settings.service';
import type { TurnSource } from '../../llm/turn-source';
import { SOURCE_OF } from '../../usage/usage-recorder';

/** Why a tool that needs the model cannot ask it (no model chosen, or no key/endpoint for it). */
export class ModelUnavailableError extends Error {
  constructor(
    readonly reason: 'missing-model' | 'missing-client',
    message: string,
  ) {
    super(message);
  }
}

export interface ModelJsonRequest {
  settings: AppSettings;
  /** What the model is told to do and which JSON to answer with. */
  system: string;
  user: string;
  signal: AbortSignal;
  /** Who the call is made for (the turn whose tool asks): counted and capped as that source. */
  source?: TurnSource;
}

/**
 * One tool-less call of the configured primary model, through the same adapter
 * factory as the chat turns, whose whole reply is read as JSON. Used by the
 * tools that need a short structured answer (todo matching, plans).
 */
@Injectable()
export class ModelJsonClient {
  constructor(private readonly adapters: LlmAdapterFactory) {}

  /** The reply parsed as JSON, or `undefined` when it is not JSON. Provider failures throw. */
  async ask(request: ModelJsonRequest): Promise<unknown> {
    const model = this.model(request.settings);
    const source = request.source ?? 'chat';
    const adapter = this.adapters.forCall(model, { source });
    let text = '';
    await adapter.streamTurn(
      {
        model: model.route.model,
        systemPrompt: request.system,
        history: [],
        userMessage: request.user,
        tools: null,
        maxToolRounds: 0,
        maxOutputTokens: request.settings.outputLimits[SOURCE_OF[source]],
        signal: request.signal,
      },
      {
        onText: (delta) => {
          text += delta;
        },
        executeTool: async () =>
          JSON.stringify({ error: 'No tools in this call' }),
      },
    );
    return parseJsonReply(text);
  }

  private model(settings: AppSettings) {
    if (!settings.primaryModel)
      throw new ModelUnavailableError(
        'missing-model',
        'No model is configured: choose a primary model in Settings.',
      );
    try {
      return resolveModel(settings);
    } catch (error) {
      if (error instanceof TurnError)
        throw new ModelUnavailableError('missing-client', error.message);
      throw error;
    }
  }
}

/** A reply's JSON value, also when the model wrapped it in a ```json fence or a sentence; `undefined` when there is none. */
export function parseJsonReply(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(trimmed);
  const candidates = [fenced ? fenced[1] : trimmed];
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first >= 0 && last > first)
    candidates.push(trimmed.slice(first, last + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // Try the next reading.
    }
  }
  return undefined;
}
