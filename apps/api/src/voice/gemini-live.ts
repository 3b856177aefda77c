import { Logger } from '@nestjs/common';
import {
  GoogleGenAI,
  Modality,
  type FunctionResponse,
  type LiveConnectConfig,
  type LiveServerMessage,
  type Session,
} from '@google/genai';
import WebSocket from 'ws';
import type { TokenUsage } from '@metatronos/shared-types';
import {
  RealtimeProviderError,
  type RealtimeControl,
  type RealtimeControlListener,
  type RealtimeEvent,
  type RealtimeResponseOnly,
  type RealtimeSessionConfig,
  type RealtimeSessionUpdate,
} from './realtime-provider';

const DEFAULT_GEMINI_URL = 'https://generativelanguage.googleapis.com';
/** How long Gemini may take to open a session and answer its setup. */
const CONNECT_TIMEOUT_MS = 15_000;
/** The microphone's format as Gemini Live takes it. */
export const GEMINI_INPUT_MIME = 'audio/pcm;rate=16000';
/** At most this much microphone audio waits while the session reconnects (10 s of PCM16 at 16 kHz). */
const MAX_BUFFERED_BYTES = 10 * 16_000 * 2;
/** A mode switch waits for the end of the model's turn (a resumable state) at most this long. */
const SWITCH_WAIT_MS = 8_000;
/** A GoAway is bridged this long before the connection's end at the latest. */
const GOAWAY_MARGIN_MS = 1_000;

export interface GeminiLiveOptions {
  apiKey: string;
  model: string;
  /** A prebuilt voice name (Puck, Kore, ...); null: the model's default. */
  voice: string | null;
  /** The API's base URL (`GOOGLE_GEMINI_BASE_URL`, else Google's); http(s), the SDK turns it into ws(s). */
  baseUrl?: string;
  connectTimeoutMs?: number;
}

/** What the relay needs beyond the call's events: the audio to play, and how the session is bridged. */
export interface GeminiLiveListener extends RealtimeControlListener {
  /** PCM16 little-endian, mono, 24 kHz. */
  audio(pcm: Buffer): void;
  /** The owner spoke over Metatron: what is queued for playing is dropped. */
  interrupted(): void;
  /** The session moved to a new connection (new tools, or a GoAway bridged). */
  reconnected(info: GeminiReconnect): void;
}

export interface GeminiReconnect {
  reason: 'tools' | 'goaway';
  /** How long the microphone was held back (buffered) while the new connection opened. */
  gapMs: number;
  /** The new connection resumed the conversation from a handle (false: no handle was known yet). */
  resumed: boolean;
}

/**
 * One Gemini Live conversation, relayed by the server: microphone audio in,
 * the model's audio out, its function calls as the call's events. Gemini fixes a
 * session's tools at setup, so a mode switch (and a GoAway, the ~10-minute
 * connection limit) reconnects with the last resumable handle
 * (`sessionResumptionUpdate`) and the current tools, holding the microphone's
 * audio meanwhile and sending it on the new connection.
 */
export class GeminiLiveCall implements RealtimeControl {
  private readonly logger = new Logger(GeminiLiveCall.name);
  private readonly ai: GoogleGenAI;
  private session: Session | null = null;
  private closing = false;
  private handle: string | null = null;
  /** A resumable handle came after the last tool response: the conversation can move now. */
  private handleFresh = false;
  private generating = false;
  private readonly callNames = new Map<string, string>();
  private unanswered = 0;
  private responses: FunctionResponse[] = [];
  private switchWanted: 'tools' | 'goaway' | null = null;
  private switchTimer: NodeJS.Timeout | null = null;
  private reconnecting = false;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private turn = 0;
  private ownerItem: string | null = null;
  private ownerText = '';
  private assistantText = '';
  private usage: TokenUsage | null = null;
  private callSeq = 0;

  private constructor(
    private readonly options: GeminiLiveOptions,
    private config: RealtimeSessionConfig,
    private readonly listener: GeminiLiveListener,
  ) {
    this.ai = new GoogleGenAI({
      apiKey: options.apiKey,
      httpOptions: { baseUrl: options.baseUrl ?? geminiBaseUrl() },
    });
    (
      this.ai.live as unknown as { webSocketFactory: CheckedSocketFactory }
    ).webSocketFactory = new CheckedSocketFactory(this.logger);
  }

  /** Opens the session; rejects with a RealtimeProviderError in plain words (never the key). */
  static async open(
    options: GeminiLiveOptions,
    config: RealtimeSessionConfig,
    listener: GeminiLiveListener,
  ): Promise<GeminiLiveCall> {
    const call = new GeminiLiveCall(options, config, listener);
    call.session = await call.connect(null);
    return call;
  }

  /** Microphone audio (PCM16 LE, mono, 16 kHz); held while the session reconnects. */
  sendAudio(pcm: Buffer): void {
    if (this.closing || pcm.length === 0) return;
    if (this.reconnecting || !this.session) {
      if (this.heldBytes + pcm.length > MAX_BUFFERED_BYTES) return;
      this.held.push(pcm);
      this.heldBytes += pcm.length;
      return;
    }
    this.session.sendRealtimeInput({
      audio: { data: pcm.toString('base64'), mimeType: GEMINI_INPUT_MIME },
    });
  }

  sendToolOutput(callId: string, output: string): void {
    this.responses.push({
      id: callId,
      name: this.callNames.get(callId) ?? '',
      response: responseObject(output),
    });
  }

  /** Gemini takes no new tools mid-session: the switch happens at the end of this turn. */
  updateSession(update: RealtimeSessionUpdate): void {
    this.config = { ...this.config, ...update };
    this.switchWanted = 'tools';
    this.armSwitchTimer(SWITCH_WAIT_MS);
  }

  /**
   * Gemini cannot cancel what it is saying from the server: a new turn (the goodbye
   * below) interrupts it, so there is nothing to do here.
   */
  cancelResponse(): void {
    return;
  }

  /**
   * Sends the answered function calls; Gemini goes on speaking by itself. With `only`
   * (the budget's goodbye), Gemini is asked in a text turn to say just that.
   */
  createResponse(only?: RealtimeResponseOnly): void {
    if (only) {
      this.session?.sendClientContent({
        turns: [{ role: 'user', parts: [{ text: only.instructions }] }],
        turnComplete: true,
      });
      return;
    }
    if (!this.responses.length || !this.session) return;
    const functionResponses = this.responses;
    this.responses = [];
    this.unanswered = Math.max(0, this.unanswered - functionResponses.length);
    this.handleFresh = false;
    this.session.sendToolResponse({ functionResponses });
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    if (this.switchTimer) clearTimeout(this.switchTimer);
    this.session?.close();
  }

  private connect(handle: string | null): Promise<Session> {
    const { tools, instructions } = this.config;
    const config: LiveConnectConfig = {
      responseModalities: [Modality.AUDIO],
      systemInstruction: instructions,
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      sessionResumption: handle ? { handle } : {},
      ...(tools.length
        ? {
            tools: [
              {
                functionDeclarations: tools.map((tool) => ({
                  name: tool.name,
                  description: tool.description,
                  parametersJsonSchema: tool.parameters,
                })),
              },
            ],
          }
        : {}),
      ...(this.options.voice
        ? {
            speechConfig: {
              voiceConfig: {
                prebuiltVoiceConfig: { voiceName: this.options.voice },
              },
            },
          }
        : {}),
    };
    let session: Session | null = null;
    return new Promise<Session>((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        session?.close();
        reject(new RealtimeProviderError(this.redact(message)));
      };
      const timer = setTimeout(
        () =>
          fail(
            `Gemini did not open the live session within ${Math.round((this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS) / 1000)} s.`,
          ),
        this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      );
      this.ai.live
        .connect({
          model: this.options.model,
          config,
          callbacks: {
            onmessage: (message) => {
              if (session && session === this.session) this.receive(message);
            },
            onerror: (event) => {
              const text = this.redact(
                (event as { message?: string }).message ?? 'network error',
              );
              this.logger.warn(`Gemini Live connection error: ${text}`);
              fail(`Gemini Live could not be reached: ${text}`);
            },
            onclose: (event) => {
              if (!settled)
                return fail(
                  `Gemini closed the live session (${event.code}${event.reason ? `: ${event.reason}` : ''}). Check the Gemini key and the model in Settings.`,
                );
              if (session && session === this.session && !this.closing)
                this.listener.closed(
                  `Gemini closed the session (${event.code}${event.reason ? `: ${this.redact(event.reason)}` : ''})`,
                );
            },
          },
        })
        .then(
          (opened) => {
            session = opened;
            if (settled) return opened.close();
            settled = true;
            clearTimeout(timer);
            resolve(opened);
          },
          (error: Error) => fail(error.message),
        );
    });
  }

  /** One server message; anything malformed or unknown is logged and ignored. */
  private receive(message: LiveServerMessage): void {
    try {
      if (message.sessionResumptionUpdate) {
        const { resumable, newHandle } = message.sessionResumptionUpdate;
        if (resumable && typeof newHandle === 'string' && newHandle) {
          this.handle = newHandle;
          if (!this.generating && this.unanswered === 0)
            this.handleFresh = true;
        }
      }
      if (message.usageMetadata) this.usage = usageOf(message.usageMetadata);
      if (message.toolCall?.functionCalls) {
        this.ownerDone();
        this.generating = true;
        for (const call of message.toolCall.functionCalls) {
          const callId = call.id || `gemini-call-${++this.callSeq}`;
          // A call announced again is the same call: it is answered once.
          if (
            typeof call.name !== 'string' ||
            !call.name ||
            this.callNames.has(callId)
          )
            continue;
          this.callNames.set(callId, call.name);
          this.unanswered++;
          this.emit({
            type: 'function-call',
            callId,
            name: call.name,
            arguments: JSON.stringify(call.args ?? {}),
          });
        }
      }
      const content = message.serverContent;
      if (content) {
        const heard = content.inputTranscription?.text;
        if (typeof heard === 'string' && heard) {
          if (!this.ownerItem) {
            this.ownerItem = `gemini-in-${++this.callSeq}`;
            this.emit({ type: 'speech-started', itemId: this.ownerItem });
          }
          this.ownerText += heard;
        }
        for (const part of content.modelTurn?.parts ?? []) {
          const data = part.inlineData?.data;
          if (typeof data === 'string' && data) {
            this.ownerDone();
            this.generating = true;
            this.listener.audio(Buffer.from(data, 'base64'));
          }
        }
        const said = content.outputTranscription?.text;
        if (typeof said === 'string' && said) {
          this.ownerDone();
          this.generating = true;
          this.assistantText += said;
        }
        if (content.interrupted) {
          this.listener.interrupted();
          this.assistantDone();
        }
        if (content.turnComplete) this.turnDone();
      }
      if (message.goAway) {
        const left = durationMs(message.goAway.timeLeft);
        this.logger.log(
          `Gemini asked the live session to move (GoAway, ${left ?? '?'} ms left)`,
        );
        if (this.switchWanted !== 'tools') this.switchWanted = 'goaway';
        this.armSwitchTimer(Math.max(0, (left ?? 0) - GOAWAY_MARGIN_MS));
      }
      this.switchIfReady();
    } catch (error) {
      this.logger.warn(
        `Ignored a Gemini Live message: ${(error as Error).message}`,
      );
    }
  }

  private emit(event: RealtimeEvent): void {
    this.listener.event(event);
  }

  /** The owner's words are over once Metatron answers (or the turn ends). */
  private ownerDone(): void {
    if (!this.ownerItem) return;
    this.emit({
      type: 'owner-transcript',
      itemId: this.ownerItem,
      text: this.ownerText,
    });
    this.ownerItem = null;
    this.ownerText = '';
  }

  private assistantDone(): void {
    if (!this.assistantText.trim()) return;
    this.emit({
      type: 'assistant-transcript',
      responseId: `gemini-turn-${this.turn}`,
      text: this.assistantText,
    });
    this.assistantText = '';
  }

  private turnDone(): void {
    this.ownerDone();
    this.assistantDone();
    this.generating = false;
    const usage = this.usage;
    this.usage = null;
    this.emit({
      type: 'response-done',
      responseId: `gemini-turn-${this.turn++}`,
      usage,
    });
  }

  private armSwitchTimer(ms: number): void {
    if (this.switchTimer) clearTimeout(this.switchTimer);
    this.switchTimer = setTimeout(() => {
      this.switchTimer = null;
      // The resumable moment never came: move with the last handle there is.
      if (this.switchWanted) void this.reconnect();
    }, ms);
  }

  /** Moves when the conversation is at rest: no turn generating, every call answered, a handle for this moment. */
  private switchIfReady(): void {
    if (
      this.switchWanted &&
      !this.reconnecting &&
      !this.generating &&
      this.unanswered === 0 &&
      this.responses.length === 0 &&
      this.handleFresh
    )
      void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const reason = this.switchWanted;
    if (!reason || this.reconnecting || this.closing) return;
    this.switchWanted = null;
    if (this.switchTimer) clearTimeout(this.switchTimer);
    this.switchTimer = null;
    this.reconnecting = true;
    const started = performance.now();
    const old = this.session;
    const handle = this.handle;
    try {
      const next = await this.connect(handle);
      if (this.closing) {
        next.close();
        return;
      }
      this.session = next;
      this.handleFresh = false;
      this.generating = false;
      old?.close();
      this.reconnecting = false;
      const held = this.held;
      this.held = [];
      this.heldBytes = 0;
      for (const pcm of held) this.sendAudio(pcm);
      this.listener.reconnected({
        reason,
        gapMs: Math.round(performance.now() - started),
        resumed: handle !== null,
      });
    } catch (error) {
      this.reconnecting = false;
      this.listener.closed(
        `the session could not move to a new connection: ${(error as Error).message}`,
      );
    }
  }

  private redact(text: string): string {
    return this.options.apiKey
      ? text.split(this.options.apiKey).join('***')
      : text;
  }
}

interface SdkSocketCallbacks {
  onopen(): void;
  onmessage(event: { data: string }): void;
  onerror(event: unknown): void;
  onclose(event: unknown): void;
}

/**
 * The SDK's socket, with one change: a frame that is not JSON is dropped here.
 * The SDK parses each frame in a promise nobody awaits, so a malformed one would
 * be an unhandled rejection (which stops Node) rather than an ignored message.
 */
class CheckedSocketFactory {
  constructor(private readonly logger: Logger) {}

  create(
    url: string,
    headers: Record<string, string>,
    callbacks: SdkSocketCallbacks,
  ) {
    let ws: WebSocket | null = null;
    const logger = this.logger;
    return {
      connect() {
        ws = new WebSocket(url, { headers });
        ws.onopen = () => callbacks.onopen();
        ws.onerror = (event) => callbacks.onerror(event);
        ws.onclose = (event) => callbacks.onclose(event);
        ws.onmessage = (event) => {
          const data = event.data;
          const text =
            typeof data === 'string'
              ? data
              : Array.isArray(data)
                ? Buffer.concat(data).toString('utf8')
                : Buffer.from(data as ArrayBuffer).toString('utf8');
          try {
            JSON.parse(text);
          } catch {
            logger.warn('Ignored a Gemini Live frame that is not JSON');
            return;
          }
          callbacks.onmessage({ data: text });
        };
      },
      send(message: string) {
        if (!ws) throw new Error('WebSocket is not connected');
        ws.send(message);
      },
      close() {
        ws?.close();
      },
    };
  }
}

export function geminiBaseUrl(): string {
  return process.env['GOOGLE_GEMINI_BASE_URL']?.trim() || DEFAULT_GEMINI_URL;
}

/** Gemini wants an object as a function's response: a tool's JSON object as it is, anything else wrapped. */
function responseObject(output: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(output);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
    return { output: parsed };
  } catch {
    return { output };
  }
}

function usageOf(
  meta: NonNullable<LiveServerMessage['usageMetadata']>,
): TokenUsage | null {
  const input = numberOr(meta.promptTokenCount);
  const output = numberOr(meta.responseTokenCount);
  const total = numberOr(meta.totalTokenCount);
  if (input === null && output === null && total === null) return null;
  return {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    totalTokens: total ?? (input ?? 0) + (output ?? 0),
  };
}

function numberOr(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? value
    : null;
}

/** `"12s"` / `"1.5s"` (protobuf Duration in JSON) → ms. */
function durationMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Math.round(Number(match[1]) * 1000) : null;
}
