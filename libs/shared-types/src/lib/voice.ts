/** Voice calls (`/api/voice/calls`): the console's WebRTC offer in, the provider's answer out. */

/** `POST /api/voice/calls`. */
export interface StartVoiceCallRequest {
  /** The browser's SDP offer (microphone track + data channel), at most 64 KiB. */
  sdp: string;
  /** The chat the call talks in; absent: a new chat. */
  chatId?: string;
  /** The mode the call starts in; absent: the chat's mode. */
  mode?: string;
}

/** `201` of `POST /api/voice/calls`. */
export interface StartVoiceCallResponse {
  /** The provider's SDP answer, for `setRemoteDescription`. */
  sdp: string;
  callId: string;
  chatId: string;
}

/** `GET /api/voice/calls/current`: the live call, or `{ call: null }`. */
export interface VoiceCallView {
  callId: string;
  chatId: string;
  startedAt: string;
}

/**
 * A Gemini Live model (`gemini-live-2.5-flash-preview`, `gemini-2.0-flash-live-001`,
 * `gemini-2.5-flash-native-audio-preview-09-2025`): a chat with one talks through
 * the server's Gemini relay; any other chat's calls go to OpenAI Realtime.
 */
export function isGeminiLiveModel(model: string | null | undefined): boolean {
  return (
    typeof model === 'string' &&
    /^(models\/)?gemini-[a-z0-9.:_-]*(live|native-audio)/i.test(model.trim())
  );
}

/** `POST /api/voice/relay-calls`: a call through the server's relay (Gemini Live). */
export interface StartRelayCallRequest {
  /** The chat the call talks in; absent: a new chat (then the primary model decides). */
  chatId?: string;
  /** The mode the call starts in; absent: the chat's mode. */
  mode?: string;
}

/** `201` of `POST /api/voice/relay-calls`. */
export interface StartRelayCallResponse {
  callId: string;
  chatId: string;
  provider: 'gemini';
  model: string;
  /** Open a WebSocket here (same origin, the session cookie): PCM16 16 kHz in, PCM16 24 kHz out. */
  socketPath: string;
  inputSampleRate: 16000;
  outputSampleRate: 24000;
}

/** Text frames the relay socket sends beside the binary audio frames. */
export type RelaySocketMessage =
  | { type: 'ready'; callId: string }
  /** The owner spoke over Metatron: drop what is queued for playing. */
  | { type: 'interrupted' }
  | { type: 'tool'; name: string }
  | { type: 'mode'; mode: string }
  | { type: 'reconnected'; reason: 'tools' | 'goaway'; gapMs: number }
  | { type: 'ended'; reason: string };

/** `GET /api/voice/provider?chatId=`: where a call in this chat goes (the chat's model decides). */
export interface VoiceProviderView {
  provider: 'gemini' | 'openai';
  /** The chat's model, or the primary model for a chat without one; null: none set. */
  model: string | null;
}
