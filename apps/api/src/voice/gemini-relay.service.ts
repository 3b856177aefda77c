import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import {
  isGeminiLiveModel,
  type RelaySocketMessage,
  type StartRelayCallResponse,
  type VoiceProviderView,
} from '@metatronos/shared-types';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { AuthService } from '../auth/auth.service';
import { CallTranscripts } from '../chats/call-transcripts';
import type { ChatRecord } from '../chats/schemas/chat.schema';
import { Clock } from '../clock/clock';
import { APP_CONFIG } from '../config/app-config.provider';
import type { AppConfig } from '../config/app-config';
import { LlmRunner } from '../llm/llm-runner';
import { SettingsService } from '../settings/settings.service';
import { UsageRecorder } from '../usage/usage-recorder';
// The Gemini SDK loads with the first call (`import type` here, about 0.1 s of start-up).
import type { GeminiLiveCall, GeminiReconnect } from './gemini-live';
import { decideRelayUpgrade, relaySocketPath } from './relay-socket-gate';
import { VoiceCall } from './voice-call';
import type { SpendHold } from '../budget/budget.service';
import { withConfirmAction } from './spoken-confirmation';
import {
  optionalText,
  providerFailure,
  VoiceCallsService,
} from './voice-calls.service';

/** The console opens the call's audio socket right after the POST; a call nobody joins ends. */
const ATTACH_TIMEOUT_MS = 15_000;
/** A browser sends ~20–100 ms of PCM per frame; a frame over 256 KiB is not audio. */
const MAX_FRAME_BYTES = 256 * 1024;
/** Gemini's prebuilt voices: `realtimeVoice` is used when it names one (OpenAI's names are not Gemini's). */
const GEMINI_VOICES = new Set(
  [
    'puck',
    'charon',
    'kore',
    'fenrir',
    'aoede',
    'leda',
    'orus',
    'zephyr',
    'callirrhoe',
    'autonoe',
    'enceladus',
    'iapetus',
    'umbriel',
    'algieba',
    'despina',
    'erinome',
    'algenib',
    'rasalgethi',
    'laomedeia',
    'achernar',
    'alnilam',
    'schedar',
    'gacrux',
    'pulcherrima',
    'achird',
    'zubenelgenubi',
    'vindemiatrix',
    'sadachbia',
    'sadaltager',
    'sulafat',
  ].map((v) => v.toLowerCase()),
);

export interface StartRelayCall {
  chatId?: unknown;
  mode?: unknown;
}

interface Relay {
  call: VoiceCall;
  live: GeminiLiveCall;
  socket: WebSocket | null;
  attachTimer: NodeJS.Timeout;
}

/**
 * Voice calls through Gemini Live, with the API as the relay: the console sends
 * microphone PCM over an authenticated WebSocket (`/api/voice/relay/<callId>`),
 * the server forwards it to Gemini with the owner's key and sends the model's
 * audio back. The call itself (tools, transcripts, usage, limits, the one live
 * call) is the same VoiceCall the OpenAI path runs.
 */
@Injectable()
export class GeminiRelayService
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger(GeminiRelayService.name);
  /** Made with the first relay socket: ws costs start-up time otherwise. */
  private sockets: Promise<WebSocketServer> | null = null;
  private readonly relays = new Map<string, Relay>();
  private server: Server | null = null;
  /** The last bridge between two connections (tests and the log read it). */
  lastReconnect: GeminiReconnect | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: SettingsService,
    private readonly runner: LlmRunner,
    private readonly transcripts: CallTranscripts,
    private readonly usage: UsageRecorder,
    private readonly clock: Clock,
    private readonly calls: VoiceCallsService,
    private readonly adapterHost: HttpAdapterHost,
    private readonly modules: ModuleRef,
  ) {}

  /** The owner's sessions (AuthModule is built once by the app root with its hasher, so it is looked up, not imported). */
  private auth: AuthService | null = null;

  onApplicationBootstrap(): void {
    this.auth = this.modules.get(AuthService, { strict: false });
    this.server = this.adapterHost.httpAdapter?.getHttpServer() as Server;
    this.server?.on('upgrade', this.onUpgrade);
  }

  onApplicationShutdown(): void {
    this.server?.off('upgrade', this.onUpgrade);
    for (const relay of this.relays.values())
      void relay.call.end('the server is stopping');
    void this.sockets?.then((sockets) => sockets.close());
  }

  /** The chat's model decides: a Gemini Live model talks through this relay, anything else through OpenAI. */
  async providerFor(chatId: unknown): Promise<VoiceProviderView> {
    const id = optionalText(chatId, 'chatId');
    const found =
      id !== undefined ? await this.transcripts.ownerChat(id) : null;
    const model =
      (found ? found.model : null) || (await this.settings.get()).primaryModel;
    return {
      provider: isGeminiLiveModel(model) ? 'gemini' : 'openai',
      model: model ?? null,
    };
  }

  async start(request: StartRelayCall): Promise<StartRelayCallResponse> {
    const chatId = optionalText(request.chatId, 'chatId');
    const mode = optionalText(request.mode, 'mode');
    if (mode !== undefined && !this.transcripts.hasMode(mode))
      throw new BadRequestException(
        `mode must be one of ${this.transcripts.modeNames().join(', ')} (got "${mode}")`,
      );
    const found =
      chatId !== undefined ? await this.transcripts.ownerChat(chatId) : null;
    const settings = await this.settings.get();
    const model = (found ? found.model : null) || settings.primaryModel;
    if (!isGeminiLiveModel(model))
      throw new ConflictException(
        `${found ? "This chat's model" : 'The primary model'} (${model ?? 'none set'}) does not speak through Gemini Live: start the call with POST /api/voice/calls (OpenAI Realtime), or choose a Gemini Live model such as gemini-live-2.5-flash-preview for the chat.`,
      );
    const liveModel = (model as string).replace(/^models\//, '');
    if (!settings.geminiApiKey)
      throw new ConflictException(
        "No Gemini API key is set, and this chat's model speaks through Gemini Live: add the key in Settings.",
      );
    const slot = this.calls.hold();
    const chatObjectId = found?._id ?? this.transcripts.nextId();
    const startMode =
      mode ?? (found ? this.transcripts.modeOf(found) : DEFAULT_MODE);
    const accountId = found?.accountId ?? null;
    let chat: ChatRecord | null = found;
    let live: GeminiLiveCall | null = null;
    let firstHold: SpendHold | null = null;
    const callId = `gemini_${randomUUID().replace(/-/g, '')}`;
    try {
      if (!chat) chat = await this.transcripts.createChat(chatObjectId);
      const callChat = chat;
      let call: VoiceCall | null = null;
      const tools = await this.runner.openToolSession(
        {
          source: 'voice',
          chatId: chatObjectId.toHexString(),
          mode: startMode,
          accountId,
          onModeChange: (state) =>
            this.transcripts.recordMode(callChat, state.mode, state.accountId),
        },
        settings,
        {
          onModeSwitch: (next) => {
            call?.modeSwitched(next);
            this.tell(callId, { type: 'mode', mode: next });
          },
        },
      );
      const budget = this.calls.responseBudget(
        tools,
        liveModel,
        'gemini',
        settings.outputLimits.voice,
      );
      firstHold = await this.calls.firstHold(budget);
      const voice = settings.realtimeVoice?.trim() ?? '';
      const { GeminiLiveCall } = await import('./gemini-live');
      live = await GeminiLiveCall.open(
        {
          apiKey: settings.geminiApiKey,
          model: liveModel,
          voice: GEMINI_VOICES.has(voice.toLowerCase()) ? voice : null,
        },
        {
          model: liveModel,
          voice,
          instructions: tools.systemPrompt ?? '',
          tools: withConfirmAction(tools.specs),
        },
        {
          event: (event) => {
            call?.handle(event);
            if (event.type === 'function-call')
              this.tell(callId, { type: 'tool', name: event.name });
          },
          closed: (reason) => void call?.end(reason),
          audio: (pcm) => {
            const socket = this.relays.get(callId)?.socket;
            if (socket?.readyState === socket?.OPEN) socket?.send(pcm);
          },
          interrupted: () => this.tell(callId, { type: 'interrupted' }),
          reconnected: (info) => {
            this.lastReconnect = info;
            this.logger.log(
              `Voice call ${callId} moved to a new Gemini connection (${info.reason}): microphone held ${info.gapMs} ms${info.resumed ? '' : ', without a resumption handle'}`,
            );
            this.tell(callId, { type: 'reconnected', ...info });
          },
        },
      );
      if (
        mode !== undefined &&
        (!found || mode !== this.transcripts.modeOf(found))
      )
        await this.transcripts.recordMode(callChat, mode, accountId, 'owner');
      const session = live;
      call = new VoiceCall(
        {
          provider: { hangup: async () => session.close() },
          budget,
          actions: this.calls.pendingActions,
          transcripts: this.transcripts,
          usage: this.usage,
          clock: this.clock,
          logger: this.logger,
        },
        {
          callId,
          chat: callChat,
          model: liveModel,
          tools,
          maxCallMs: this.config.voice.maxCallMs,
          silenceMs: this.config.voice.silenceMs,
          usageProvider: 'gemini',
          hold: firstHold,
        },
      );
      const started = call;
      started.attach(session);
      this.relays.set(callId, {
        call: started,
        live: session,
        socket: null,
        attachTimer: setTimeout(
          () =>
            void started.end(
              "the console never opened the call's audio socket",
            ),
          ATTACH_TIMEOUT_MS,
        ),
      });
      this.calls.adopt(started, (reason) => this.detach(callId, reason));
      if (!found) this.transcripts.announceCreated(callChat);
      this.logger.log(
        `Voice call ${callId} started in chat ${chatObjectId.toHexString()} (Gemini Live ${liveModel}, mode ${startMode})`,
      );
      return {
        callId,
        chatId: chatObjectId.toHexString(),
        provider: 'gemini',
        model: liveModel,
        socketPath: relaySocketPath(callId),
        inputSampleRate: 16000,
        outputSampleRate: 24000,
      };
    } catch (error) {
      live?.close();
      await firstHold?.release();
      if (chat && !found)
        await this.transcripts
          .discard(chat)
          .catch((cleanup: Error) =>
            this.logger.warn(
              `Could not remove the chat of a call that did not start: ${cleanup.message}`,
            ),
          );
      throw providerFailure(error);
    } finally {
      this.calls.release(slot);
    }
  }

  private readonly onUpgrade = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ): void => {
    const decision = decideRelayUpgrade(
      req,
      Boolean((socket as TLSSocket).encrypted),
      {
        allowedHosts: this.config.allowedHosts,
        trustedOrigins: this.config.trustedOrigins,
      },
    );
    if (!decision) {
      // Nobody else takes upgrades: an unknown one is refused, not left hanging.
      if (this.server && this.server.listenerCount('upgrade') === 1)
        refuse(socket, 404, 'Not found');
      return;
    }
    if (!decision.allowed)
      return refuse(socket, decision.status, decision.message);
    void (
      this.auth?.isValidSession(decision.sessionToken) ?? Promise.resolve(false)
    ).then(
      (valid) => {
        if (!valid) return refuse(socket, 401, 'Log in to MetatronOS first');
        const relay = this.relays.get(decision.callId);
        if (!relay || relay.call.isEnded)
          return refuse(socket, 404, `No live voice call '${decision.callId}'`);
        if (relay.socket)
          return refuse(
            socket,
            409,
            'This call already has its audio socket open in another window.',
          );
        return this.socketServer().then(
          (sockets) => {
            // Checked again: another window may have attached while ws loaded.
            if (relay.socket)
              return refuse(
                socket,
                409,
                'This call already has its audio socket open in another window.',
              );
            sockets.handleUpgrade(req, socket, head, (ws) =>
              this.attach(decision.callId, relay, ws),
            );
          },
          () => refuse(socket, 500, 'The audio socket could not be opened'),
        );
      },
      () => refuse(socket, 500, 'The session could not be checked'),
    );
  };

  private socketServer(): Promise<WebSocketServer> {
    return (this.sockets ??= import('ws').then(
      ({ WebSocketServer }) =>
        new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES }),
    ));
  }

  private attach(callId: string, relay: Relay, ws: WebSocket): void {
    if (relay.call.isEnded) {
      ws.close(1000, 'the call has ended');
      return;
    }
    relay.socket = ws;
    clearTimeout(relay.attachTimer);
    this.tell(callId, { type: 'ready', callId });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        if (isBinary) {
          const pcm = toBuffer(data);
          // PCM16 is two bytes a sample: an odd frame is not audio.
          if (pcm.length % 2 === 0) relay.live.sendAudio(pcm);
          return;
        }
        const message = JSON.parse(toBuffer(data).toString('utf8')) as {
          type?: unknown;
        };
        if (message?.type === 'hangup')
          void relay.call.end('the owner hung up');
      } catch {
        // A malformed control frame is ignored: the call goes on.
      }
    });
    ws.on('close', () => void relay.call.end('the console left the call'));
    ws.on('error', (error) =>
      this.logger.warn(`Relay socket of call ${callId}: ${error.message}`),
    );
  }

  private detach(callId: string, reason: string): void {
    const relay = this.relays.get(callId);
    if (!relay) return;
    this.relays.delete(callId);
    clearTimeout(relay.attachTimer);
    const ws = relay.socket;
    if (ws && ws.readyState === ws.OPEN) {
      ws.send(
        JSON.stringify({ type: 'ended', reason } satisfies RelaySocketMessage),
      );
      ws.close(1000, 'call ended');
    }
  }

  private tell(callId: string, message: RelaySocketMessage): void {
    const ws = this.relays.get(callId)?.socket;
    if (ws && ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ statusCode: status, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  421: 'Misdirected Request',
  500: 'Internal Server Error',
};

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
