import type { TokenUsage } from '@metatronos/shared-types';
import type { LlmToolSpec } from '../llm/llm-adapter';

/** What a call's session is set up with (and changed to on a mode switch). */
export interface RealtimeSessionConfig {
  model: string;
  voice: string;
  instructions: string;
  tools: LlmToolSpec[];
  /** Each response's output limit (the budget's worst case); omitted: the provider's own. */
  maxOutputTokens?: number;
  /** How fast the model speaks (1 normal; the relax mode is slower); omitted: the provider's default. */
  speed?: number;
}

/** A response of fixed words (the goodbye when the budget ends a call): no tools, a short limit. */
export interface RealtimeResponseOnly {
  instructions: string;
  maxOutputTokens: number;
}

/** What a mode switch changes in a live session. */
export type RealtimeSessionUpdate = Pick<
  RealtimeSessionConfig,
  'instructions' | 'tools' | 'speed'
>;

/**
 * A provider's events as the call handles them, whatever the wire format.
 * A provider may announce one function call several times: the call runs it once.
 */
export type RealtimeEvent =
  | { type: 'speech-started'; itemId: string | null }
  | { type: 'owner-transcript'; itemId: string | null; text: string }
  | { type: 'response-started'; responseId: string | null }
  | {
      type: 'assistant-transcript';
      responseId: string | null;
      text: string;
    }
  | {
      type: 'function-call';
      callId: string;
      name: string;
      /** The model's JSON text, unparsed. */
      arguments: string;
    }
  | {
      type: 'response-done';
      responseId: string | null;
      usage: TokenUsage | null;
    }
  | { type: 'provider-error'; message: string };

export interface RealtimeControlListener {
  event(event: RealtimeEvent): void;
  /** The control channel is gone (the provider ended the call, or the network dropped it). */
  closed(reason: string): void;
}

/** The server's own channel to a live call: how its tools answer and its session changes. */
export interface RealtimeControl {
  sendToolOutput(callId: string, output: string): void;
  updateSession(update: RealtimeSessionUpdate): void;
  createResponse(only?: RealtimeResponseOnly): void;
  /** Stops the response under way (its words so far are billed, nothing more). */
  cancelResponse(): void;
  close(): void;
}

/** A realtime provider (OpenAI GA over WebRTC; Gemini Live through a relay later), one per call. */
export interface RealtimeProvider {
  readonly name: string;
  /** Sends the browser's SDP offer with the session; answers the provider's SDP and the call's id. */
  createCall(
    offer: string,
    session: RealtimeSessionConfig,
    signal?: AbortSignal,
  ): Promise<{ answer: string; callId: string }>;
  /** Opens the control channel of a created call; resolves once it is open. */
  openControl(
    callId: string,
    listener: RealtimeControlListener,
  ): Promise<RealtimeControl>;
  /** Ends the call at the provider (never throws: the call is over for us either way). */
  hangup(callId: string): Promise<void>;
}

/** The provider refused or failed; `message` is plain words for the owner (never a key). */
export class RealtimeProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'RealtimeProviderError';
  }
}
