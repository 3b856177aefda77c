/** What the call bar shows, from the provider's events on the call's data channel. */
export type VoiceCallPhase =
  | 'idle'
  | 'connecting'
  | 'listening'
  | 'speaking'
  | 'tool'
  | 'ended'
  | 'failed';

export interface VoiceCallStatus {
  phase: VoiceCallPhase;
  /** A tool running, in words (`tool`), or null. */
  tool: string | null;
  /** The conversation's mode once the model switched it, or null. */
  mode: string | null;
}

/**
 * The next status after one data-channel event. The server runs the tools; the
 * browser only shows what happens. Unknown or malformed events change nothing.
 */
export function nextStatus(
  status: VoiceCallStatus,
  raw: unknown,
): VoiceCallStatus {
  if (!raw || typeof raw !== 'object') return status;
  const event = raw as Record<string, unknown>;
  switch (event['type']) {
    case 'input_audio_buffer.speech_started':
    case 'output_audio_buffer.stopped':
    case 'output_audio_buffer.cleared':
      return { ...status, phase: 'listening', tool: null };
    case 'output_audio_buffer.started':
    case 'response.output_audio.delta':
      return { ...status, phase: 'speaking', tool: null };
    case 'response.function_call_arguments.done': {
      const name = typeof event['name'] === 'string' ? event['name'] : null;
      if (!name) return status;
      let mode = status.mode;
      if (name === 'set_mode' && typeof event['arguments'] === 'string') {
        try {
          const args = JSON.parse(event['arguments']) as { mode?: unknown };
          if (typeof args.mode === 'string') mode = args.mode;
        } catch {
          // The server answers a malformed call; the bar keeps the mode it knows.
        }
      }
      return { phase: 'tool', tool: toolInWords(name), mode };
    }
    default:
      return status;
  }
}

/** `email_actions` → "email actions". */
export function toolInWords(name: string): string {
  return name.replace(/_/g, ' ').trim() || name;
}

/** Why a call could not start or stopped, in plain words with what to do. */
export function voiceProblem(error: unknown): string {
  const name =
    error && typeof error === 'object' && 'name' in error
      ? String((error as { name: unknown }).name)
      : '';
  if (name === 'NotAllowedError' || name === 'SecurityError')
    return 'The microphone is blocked: allow it for this site in the browser (the icon by the address bar), then press the microphone again.';
  if (name === 'NotFoundError' || name === 'OverconstrainedError')
    return 'No microphone was found: connect one (or pick it in the system settings) and try again.';
  if (name === 'NotReadableError')
    return 'The microphone is in use by another program: close it there and try again.';
  const status =
    error && typeof error === 'object' && 'status' in error
      ? Number((error as { status: unknown }).status)
      : NaN;
  const message = serverMessage(error);
  if (status === 409 && /key/i.test(message) && /gemini/i.test(message))
    return 'This chat speaks through Gemini Live, which needs a Gemini API key: add it in Settings.';
  if (status === 409 && /key/i.test(message))
    return 'Voice calls need an OpenAI API key (the model that speaks is OpenAI Realtime): add it in Settings.';
  if (status === 409)
    return message || 'A call is already live: hang it up first.';
  if (status === 502)
    return message
      ? `${message}`
      : 'OpenAI refused the call: check the key and the realtime model in Settings.';
  if (status === 0)
    return 'The network is lost: the call could not reach the server. Check the connection and try again.';
  if (message) return message;
  if (
    error instanceof Error &&
    /cannot make calls|audio connection/.test(error.message)
  )
    return error.message;
  return 'The call could not start. Try again; if it keeps failing, see the server log.';
}

function serverMessage(error: unknown): string {
  if (!error || typeof error !== 'object' || !('error' in error)) return '';
  const body = (error as { error: unknown }).error;
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as { message: unknown }).message;
    if (typeof message === 'string') return message;
    if (Array.isArray(message)) return message.join(' ');
  }
  return '';
}
