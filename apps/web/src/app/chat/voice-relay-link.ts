import type {
  RelaySocketMessage,
  StartRelayCallResponse,
} from '@metatronos/shared-types';
import { fromPcm16, toPcm16 } from './pcm-audio';
import { toolInWords, type VoiceCallStatus } from './voice-call-state';

/** Microphone frames of 4096 samples: ~85 ms at 48 kHz, small enough to keep latency down. */
const FRAME_SAMPLES = 4096;

/** The next bar status after one relay message (the relay's counterpart of `nextStatus`). */
export function relayStatus(
  status: VoiceCallStatus,
  message: unknown,
): VoiceCallStatus {
  if (!message || typeof message !== 'object') return status;
  const m = message as Partial<RelaySocketMessage> & Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'interrupted':
      return { ...status, phase: 'listening', tool: null };
    case 'tool':
      return typeof m['name'] === 'string'
        ? { ...status, phase: 'tool', tool: toolInWords(m['name']) }
        : status;
    case 'mode':
      return typeof m['mode'] === 'string'
        ? { ...status, mode: m['mode'] }
        : status;
    default:
      return status;
  }
}

export interface VoiceRelayEvents {
  status(update: (status: VoiceCallStatus) => VoiceCallStatus): void;
  /** The call ended at the server (a limit, a hang-up elsewhere) or the socket was lost. */
  ended(reason: string, lost: boolean): void;
}

/**
 * The browser's end of a Gemini Live call through the server's relay: the
 * microphone as PCM16 16 kHz over the call's WebSocket, the model's PCM16 24 kHz
 * played back-to-back as it arrives and dropped when the owner speaks over it.
 * A ScriptProcessor, not an AudioWorklet: a worklet needs a module URL of its
 * own, which the console's script policy (same origin, no blob:) does not give.
 */
export class VoiceRelayLink {
  private readonly context: AudioContext;
  private readonly processor: ScriptProcessorNode;
  private readonly source: MediaStreamAudioSourceNode;
  private readonly playing = new Set<AudioBufferSourceNode>();
  private playHead = 0;
  private closed = false;
  muted = false;

  private constructor(
    private readonly ws: WebSocket,
    mic: MediaStream,
    private readonly start: StartRelayCallResponse,
    private readonly events: VoiceRelayEvents,
  ) {
    this.context = new AudioContext();
    this.source = this.context.createMediaStreamSource(mic);
    this.processor = this.context.createScriptProcessor(FRAME_SAMPLES, 1, 1);
    this.processor.onaudioprocess = (event) => {
      if (this.muted || this.ws.readyState !== WebSocket.OPEN) return;
      const pcm = toPcm16(
        event.inputBuffer.getChannelData(0),
        this.context.sampleRate,
        start.inputSampleRate,
      );
      this.ws.send(pcm.buffer);
    };
    this.source.connect(this.processor);
    // A ScriptProcessor only runs when connected onwards; its output stays silent.
    this.processor.connect(this.context.destination);
    ws.onmessage = (event) => this.receive(event.data);
    ws.onclose = () =>
      this.finish(
        'The call was cut: the connection to the server was lost.',
        true,
      );
  }

  /** Opens the call's socket (same origin: the session cookie goes with it). */
  static open(
    start: StartRelayCallResponse,
    mic: MediaStream,
    events: VoiceRelayEvents,
  ): Promise<VoiceRelayLink> {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}${start.socketPath}`);
    ws.binaryType = 'arraybuffer';
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(new VoiceRelayLink(ws, mic, start, events));
      ws.onerror = () =>
        reject(
          new Error(
            "The call's audio connection to the server could not be opened: check the network and call again.",
          ),
        );
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopPlaying();
    this.processor.onaudioprocess = null;
    this.source.disconnect();
    this.processor.disconnect();
    void this.context.close();
    this.ws.onclose = null;
    if (this.ws.readyState <= WebSocket.OPEN) this.ws.close(1000);
  }

  private receive(data: unknown): void {
    if (data instanceof ArrayBuffer) {
      this.play(data);
      return;
    }
    let message: RelaySocketMessage;
    try {
      message = JSON.parse(String(data)) as RelaySocketMessage;
    } catch {
      return;
    }
    if (message.type === 'interrupted') this.stopPlaying();
    if (message.type === 'ended') {
      this.finish(message.reason, false);
      return;
    }
    this.events.status((s) => relayStatus(s, message));
  }

  private play(bytes: ArrayBuffer): void {
    const samples = fromPcm16(bytes);
    if (!samples.length) return;
    const buffer = this.context.createBuffer(
      1,
      samples.length,
      this.start.outputSampleRate,
    );
    buffer.copyToChannel(samples, 0);
    const node = this.context.createBufferSource();
    node.buffer = buffer;
    node.connect(this.context.destination);
    const at = Math.max(this.context.currentTime, this.playHead);
    node.start(at);
    this.playHead = at + buffer.duration;
    this.playing.add(node);
    this.events.status((s) => ({ ...s, phase: 'speaking', tool: null }));
    node.onended = () => {
      this.playing.delete(node);
      if (!this.playing.size && !this.closed)
        this.events.status((s) =>
          s.phase === 'speaking' ? { ...s, phase: 'listening' } : s,
        );
    };
  }

  /** The owner spoke over Metatron: what was queued is not played. */
  private stopPlaying(): void {
    for (const node of this.playing) {
      node.onended = null;
      try {
        node.stop();
      } catch {
        // Already stopped.
      }
    }
    this.playing.clear();
    this.playHead = 0;
  }

  private finish(reason: string, lost: boolean): void {
    if (this.closed) return;
    this.close();
    this.events.ended(reason, lost);
  }
}
