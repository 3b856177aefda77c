import { Logger } from '@nestjs/common';
import type WebSocket from 'ws';
import type { TokenUsage } from '@metatronos/shared-types';
import {
  RealtimeProviderError,
  type RealtimeControl,
  type RealtimeControlListener,
  type RealtimeEvent,
  type RealtimeProvider,
  type RealtimeSessionConfig,
  type RealtimeResponseOnly,
  type RealtimeSessionUpdate,
} from './realtime-provider';

const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1';
/** How long the provider may take to answer an offer or open the control channel. */
const PROVIDER_TIMEOUT_MS = 15_000;
/** Input transcription runs beside the speaking model (it is what the chat keeps of the owner's words). */
const TRANSCRIPTION_MODEL = 'gpt-4o-mini-transcribe';

/**
 * OpenAI's Realtime API (GA interface) over WebRTC: the browser's offer goes to
 * `POST <base>/realtime/calls` (multipart: `sdp` and `session`) with the owner's
 * key, the answer comes back as SDP with the call's id in `Location`, and the
 * server keeps its own control WebSocket on `<base>/realtime?call_id=<id>`, where
 * tools run and the session changes.
 */
export class OpenAiRealtime implements RealtimeProvider {
  readonly name = 'OpenAI';
  private readonly logger = new Logger(OpenAiRealtime.name);
  private readonly baseUrl: string;

  constructor(private readonly apiKey: string) {
    this.baseUrl = (
      process.env['OPENAI_BASE_URL']?.trim() || DEFAULT_OPENAI_URL
    ).replace(/\/+$/, '');
  }

  async createCall(
    offer: string,
    session: RealtimeSessionConfig,
    signal?: AbortSignal,
  ): Promise<{ answer: string; callId: string }> {
    const form = new FormData();
    form.set('sdp', offer);
    form.set('session', JSON.stringify(sessionBody(session)));
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/realtime/calls`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.apiKey}` },
        body: form,
        signal: signal
          ? AbortSignal.any([signal, AbortSignal.timeout(PROVIDER_TIMEOUT_MS)])
          : AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
      });
    } catch (error) {
      throw new RealtimeProviderError(
        `OpenAI could not be reached to start the call (${hostOf(this.baseUrl)}): ${this.redact((error as Error).message)}`,
      );
    }
    const text = await response.text();
    if (!response.ok)
      throw new RealtimeProviderError(
        this.refusal(response.status, text, session.model),
        response.status,
      );
    const callId = callIdFrom(response.headers.get('location'));
    if (!callId || !text.startsWith('v='))
      throw new RealtimeProviderError(
        'OpenAI answered the call without a usable SDP answer or call id.',
        response.status,
      );
    return { answer: text, callId };
  }

  async openControl(
    callId: string,
    listener: RealtimeControlListener,
  ): Promise<RealtimeControl> {
    // ws is loaded with the first call: it costs start-up time otherwise.
    const { default: WebSocket } = await import('ws');
    const url = `${this.baseUrl.replace(/^http/, 'ws')}/realtime?call_id=${encodeURIComponent(callId)}`;
    const socket = new WebSocket(url, {
      headers: { Authorization: `Bearer ${this.apiKey}` },
      handshakeTimeout: PROVIDER_TIMEOUT_MS,
    });
    return new Promise((resolve, reject) => {
      let open = false;
      socket.on('open', () => {
        open = true;
        resolve(new OpenAiControl(socket));
      });
      socket.on('message', (data) => {
        for (const event of parseServerEvent(String(data), this.logger))
          listener.event(event);
      });
      socket.on('error', (error) => {
        this.logger.warn(
          `Realtime control channel error: ${this.redact(error.message)}`,
        );
        if (!open)
          reject(
            new RealtimeProviderError(
              `The call's control channel at OpenAI could not be opened: ${this.redact(error.message)}`,
            ),
          );
      });
      socket.on('close', (code) => {
        if (!open)
          reject(
            new RealtimeProviderError(
              `OpenAI closed the call's control channel (${code}) before it opened.`,
            ),
          );
        else listener.closed(`the control channel closed (${code})`);
      });
    });
  }

  async hangup(callId: string): Promise<void> {
    try {
      await fetch(
        `${this.baseUrl}/realtime/calls/${encodeURIComponent(callId)}/hangup`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${this.apiKey}` },
          signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
        },
      );
    } catch (error) {
      this.logger.warn(
        `Could not hang up call ${callId} at OpenAI: ${this.redact((error as Error).message)}`,
      );
    }
  }

  /** The provider's refusal in plain words; its own text is kept only with the key cut out. */
  private refusal(status: number, body: string, model: string): string {
    if (status === 401)
      return 'OpenAI refused the API key: check the OpenAI key in Settings.';
    if (status === 403)
      return `OpenAI refused this key access to the model '${model}': check the key's project and permissions.`;
    if (status === 429)
      return 'OpenAI refused the call: rate limit or quota reached. Try again later or check the billing of the key.';
    const detail = providerMessage(body);
    if (status === 404 || /model/i.test(detail))
      return `OpenAI refused the speaking model '${model}'${detail ? `: ${this.redact(detail)}` : ''}. Choose another realtime model in Settings.`;
    return `OpenAI refused the call (${status})${detail ? `: ${this.redact(detail)}` : ''}.`;
  }

  private redact(text: string): string {
    return redactKey(text, this.apiKey);
  }
}

class OpenAiControl implements RealtimeControl {
  constructor(private readonly socket: WebSocket) {}

  sendToolOutput(callId: string, output: string): void {
    this.send({
      type: 'conversation.item.create',
      item: { type: 'function_call_output', call_id: callId, output },
    });
  }

  updateSession(update: RealtimeSessionUpdate): void {
    // The GA interface drops an update whose session has no `type` without a word.
    this.send({
      type: 'session.update',
      session: {
        type: 'realtime',
        instructions: update.instructions,
        tools: toolsOf(update),
        tool_choice: 'auto',
        ...(update.speed !== undefined
          ? { audio: { output: { speed: update.speed } } }
          : {}),
      },
    });
  }

  createResponse(only?: RealtimeResponseOnly): void {
    if (!only) {
      this.send({ type: 'response.create' });
      return;
    }
    // A one-off response: these instructions, no tools, a short output limit.
    this.send({
      type: 'response.create',
      response: {
        instructions: only.instructions,
        tools: [],
        tool_choice: 'none',
        max_output_tokens: only.maxOutputTokens,
      },
    });
  }

  cancelResponse(): void {
    this.send({ type: 'response.cancel' });
  }

  close(): void {
    this.socket.close(1000);
  }

  private send(event: object): void {
    if (this.socket.readyState === this.socket.OPEN)
      this.socket.send(JSON.stringify(event));
  }
}

/** The GA session of a new call. */
export function sessionBody(session: RealtimeSessionConfig): object {
  return {
    type: 'realtime',
    model: session.model,
    instructions: session.instructions,
    audio: {
      input: {
        transcription: { model: TRANSCRIPTION_MODEL },
        turn_detection: { type: 'server_vad', create_response: true },
      },
      output: {
        voice: session.voice,
        ...(session.speed !== undefined ? { speed: session.speed } : {}),
      },
    },
    tools: toolsOf(session),
    tool_choice: 'auto',
    ...(session.maxOutputTokens
      ? { max_output_tokens: session.maxOutputTokens }
      : {}),
  };
}

function toolsOf(session: RealtimeSessionUpdate): object[] {
  return session.tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: t.parameters,
  }));
}

/** `/v1/realtime/calls/rtc_abc` → `rtc_abc`. */
function callIdFrom(location: string | null): string | null {
  const id = location?.split('?')[0].split('/').filter(Boolean).pop();
  return id && /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : null;
}

function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    const message = parsed.error?.message;
    return typeof message === 'string' ? message.slice(0, 300) : '';
  } catch {
    return '';
  }
}

/** Cuts the key (and anything shaped like an OpenAI key) out of a text shown to the owner or logged. */
export function redactKey(text: string, apiKey: string): string {
  let out = apiKey ? text.split(apiKey).join('[key]') : text;
  out = out.replace(/sk-[A-Za-z0-9_*-]{4,}/g, '[key]');
  return out;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * The events of one control-channel message the call acts on. A function call
 * is announced in `response.function_call_arguments.done`, `response.output_item.done`
 * and `response.done`: each announcement becomes a `function-call` (the call
 * de-duplicates). Malformed or unknown events are logged and skipped.
 */
export function parseServerEvent(
  raw: string,
  logger?: Logger,
): RealtimeEvent[] {
  let event: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!isRecord(parsed) || typeof parsed['type'] !== 'string')
      throw new Error('not an event object');
    event = parsed;
  } catch (error) {
    logger?.warn(
      `Ignored a malformed realtime event: ${(error as Error).message}`,
    );
    return [];
  }
  const str = (value: unknown): string | null =>
    typeof value === 'string' ? value : null;
  switch (event['type']) {
    case 'input_audio_buffer.speech_started':
      return [{ type: 'speech-started', itemId: str(event['item_id']) }];
    case 'conversation.item.input_audio_transcription.completed': {
      const text = str(event['transcript']);
      return text === null
        ? []
        : [{ type: 'owner-transcript', itemId: str(event['item_id']), text }];
    }
    case 'response.created':
      return [
        {
          type: 'response-started',
          responseId: isRecord(event['response'])
            ? str(event['response']['id'])
            : null,
        },
      ];
    case 'response.output_audio_transcript.done': {
      const text = str(event['transcript']);
      return text === null
        ? []
        : [
            {
              type: 'assistant-transcript',
              responseId: str(event['response_id']),
              text,
            },
          ];
    }
    case 'response.function_call_arguments.done':
      return functionCall(event);
    case 'response.output_item.done':
      return isRecord(event['item']) ? functionCall(event['item']) : [];
    case 'response.done': {
      const response = isRecord(event['response']) ? event['response'] : {};
      const output = Array.isArray(response['output'])
        ? response['output']
        : [];
      return [
        ...output.flatMap((item: unknown) =>
          isRecord(item) ? functionCall(item) : [],
        ),
        {
          type: 'response-done',
          responseId: str(response['id']),
          usage: usageOf(response['usage']),
        },
      ];
    }
    case 'error': {
      const error = isRecord(event['error']) ? event['error'] : {};
      return [
        {
          type: 'provider-error',
          message: str(error['message']) ?? 'unknown error',
        },
      ];
    }
    default:
      return [];
  }
}

function functionCall(item: Record<string, unknown>): RealtimeEvent[] {
  // The arguments event has no item type; the output item and response.done carry `type: function_call`.
  if ('type' in item && item['type'] !== 'function_call') {
    if (item['type'] !== 'response.function_call_arguments.done') return [];
  }
  const callId = item['call_id'];
  const name = item['name'];
  const args = item['arguments'];
  if (typeof callId !== 'string' || typeof name !== 'string') return [];
  return [
    {
      type: 'function-call',
      callId,
      name,
      arguments: typeof args === 'string' ? args : '{}',
    },
  ];
}

/** `response.done`'s usage, with the audio and cached parts the budget prices apart. */
export function usageOf(value: unknown): TokenUsage | null {
  if (!isRecord(value)) return null;
  const n = (v: unknown): number =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
  const inputTokens = n(value['input_tokens']);
  const outputTokens = n(value['output_tokens']);
  const inDetails = isRecord(value['input_token_details'])
    ? value['input_token_details']
    : {};
  const outDetails = isRecord(value['output_token_details'])
    ? value['output_token_details']
    : {};
  const cachedDetails = isRecord(inDetails['cached_tokens_details'])
    ? inDetails['cached_tokens_details']
    : null;
  const audioIn = n(inDetails['audio_tokens']);
  const cached = n(inDetails['cached_tokens']);
  const audioOut = n(outDetails['audio_tokens']);
  return {
    inputTokens,
    outputTokens,
    totalTokens: n(value['total_tokens']) || inputTokens + outputTokens,
    ...(audioIn ? { audioInputTokens: audioIn } : {}),
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(cached && cachedDetails
      ? { cachedAudioInputTokens: n(cachedDetails['audio_tokens']) }
      : {}),
    ...(audioOut ? { audioOutputTokens: audioOut } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
