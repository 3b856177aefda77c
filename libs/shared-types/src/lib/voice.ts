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
