import { randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ConflictException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import {
  isGeminiLiveModel,
  type ModelProvider,
  type StartVoiceCallResponse,
} from '@metatronos/shared-types';
import { PendingActionsService } from '../actions/pending-actions.service';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { AiToolRegistry } from '../ai-tools/ai-tool-registry';
import { BudgetRefusal } from '../budget/budget-refusal';
import { BudgetService, type SpendHold } from '../budget/budget.service';
import { promptTokensOf } from '../budget/model-prices';
import { CallTranscripts } from '../chats/call-transcripts';
import { LiveVoiceCall } from '../chats/live-voice-call';
import type { ChatRecord } from '../chats/schemas/chat.schema';
import { Clock } from '../clock/clock';
import { APP_CONFIG } from '../config/app-config.provider';
import type { AppConfig } from '../config/app-config';
import { LlmRunner } from '../llm/llm-runner';
import type { ToolSession } from '../llm/tool-session';
import { SettingsService } from '../settings/settings.service';
import { UsageRecorder } from '../usage/usage-recorder';
import { OpenAiRealtime } from './openai-realtime';
import {
  RealtimeProviderError,
  type RealtimeProvider,
} from './realtime-provider';
import { withConfirmAction } from './spoken-confirmation';
import {
  GOODBYE_OUTPUT_TOKENS,
  VoiceCall,
  type VoiceCallBudget,
} from './voice-call';

export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';
export const DEFAULT_REALTIME_VOICE = 'marin';
/** What the owner may say before the next response, beyond the conversation so far: about 2.5 minutes of speech. */
const SPEECH_MARGIN_TOKENS = 1_500;
/** An SDP offer of a microphone and a data channel is a few KiB; more is not an offer. */
export const MAX_SDP_BYTES = 64 * 1024;

export interface StartVoiceCall {
  sdp: unknown;
  chatId?: unknown;
  mode?: unknown;
}

/** Creates the provider of a call; tests and other providers plug in here. */
export abstract class RealtimeProviderFactory {
  abstract create(apiKey: string): RealtimeProvider;
}

export class OpenAiRealtimeFactory extends RealtimeProviderFactory {
  create(apiKey: string): RealtimeProvider {
    return new OpenAiRealtime(apiKey);
  }
}

/**
 * Voice calls: one live call at a time, started with the browser's SDP offer
 * and the owner's key (which never leaves the server), run by a VoiceCall, and
 * ended by a hang-up, a dropped control channel, a limit or the app stopping.
 */
@Injectable()
export class VoiceCallsService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(VoiceCallsService.name);
  private live: VoiceCall | null = null;
  /** A call being set up holds the one place too (no two POSTs race past the check). */
  private starting: string | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: SettingsService,
    private readonly runner: LlmRunner,
    private readonly transcripts: CallTranscripts,
    private readonly usage: UsageRecorder,
    private readonly clock: Clock,
    private readonly providers: RealtimeProviderFactory,
    private readonly budget: BudgetService,
    private readonly actions: PendingActionsService,
    private readonly registry: AiToolRegistry,
    private readonly liveCall: LiveVoiceCall,
  ) {}

  /** The live call, and its chat for the chat's versions (edits and switches wait for the hang-up). */
  private setLive(call: VoiceCall | null): void {
    this.live = call;
    this.liveCall.set(call ? call.chat._id.toHexString() : null);
  }

  /** A mode's speech speed (`AiMode.speechSpeed`: relax speaks slower), 1 when it sets none. */
  private speedOf(mode: string): number {
    return this.registry.modes().find((m) => m.name === mode)?.speechSpeed ?? 1;
  }

  async start(request: StartVoiceCall): Promise<StartVoiceCallResponse> {
    const sdp = checkSdp(request.sdp);
    const chatId = optionalText(request.chatId, 'chatId');
    const mode = optionalText(request.mode, 'mode');
    if (mode !== undefined && !this.transcripts.hasMode(mode))
      throw new BadRequestException(
        `mode must be one of ${this.transcripts.modeNames().join(', ')} (got "${mode}")`,
      );
    const found =
      chatId !== undefined ? await this.transcripts.ownerChat(chatId) : null;
    if (found && isGeminiLiveModel(found.model))
      throw new ConflictException(
        `This chat's model ${found.model} speaks through Gemini Live: start its call with POST /api/voice/relay-calls.`,
      );
    const settings = await this.settings.get();
    if (!settings.openaiApiKey)
      throw new ConflictException(
        'No OpenAI API key is set, and voice calls speak through OpenAI Realtime: add the key in Settings.',
      );
    this.claim();
    const slot = (this.starting = `starting-${randomUUID()}`);
    // A new chat is written while the provider answers: its id is known to the call's tools from the start.
    const chatObjectId = found?._id ?? this.transcripts.nextId();
    const newChat = found
      ? null
      : this.transcripts.createChat(chatObjectId).then(
          (chat) => ({ chat }),
          (error: Error) => ({ error }),
        );
    const startMode =
      mode ?? (found ? this.transcripts.modeOf(found) : DEFAULT_MODE);
    const accountId = found?.accountId ?? null;
    let provider: RealtimeProvider | null = null;
    let callId: string | null = null;
    let firstHold: SpendHold | null = null;
    try {
      const model = settings.realtimeModel || DEFAULT_REALTIME_MODEL;
      let call: VoiceCall | null = null;
      let chat: ChatRecord | null = found;
      const chatReady = async (): Promise<ChatRecord> => {
        if (chat) return chat;
        const made = await (newChat as NonNullable<typeof newChat>);
        if ('error' in made) throw made.error;
        return (chat = made.chat);
      };
      const tools = await this.runner.openToolSession(
        {
          source: 'voice',
          chatId: chatObjectId.toHexString(),
          mode: startMode,
          accountId,
          onModeChange: async (state) =>
            this.transcripts.recordMode(
              await chatReady(),
              state.mode,
              state.accountId,
            ),
        },
        settings,
        { onModeSwitch: (next) => call?.modeSwitched(next) },
      );
      const maxOutputTokens = settings.outputLimits.voice;
      const budget = this.responseBudget(
        tools,
        model,
        'openai',
        maxOutputTokens,
      );
      firstHold = await this.firstHold(budget);
      provider = this.providers.create(settings.openaiApiKey);
      const created = await provider
        .createCall(sdp, {
          model,
          voice: settings.realtimeVoice || DEFAULT_REALTIME_VOICE,
          instructions: tools.systemPrompt ?? '',
          maxOutputTokens,
          tools: withConfirmAction(tools.specs),
          speed: this.speedOf(tools.mode),
        })
        .catch((error: unknown) => {
          throw providerFailure(error);
        });
      callId = created.callId;
      const [callChat] = await Promise.all([
        chatReady(),
        mode !== undefined &&
        (!found || mode !== this.transcripts.modeOf(found))
          ? chatReady().then((c) =>
              this.transcripts.recordMode(c, mode, accountId, 'owner'),
            )
          : null,
      ]);
      call = new VoiceCall(
        {
          provider,
          budget,
          transcripts: this.transcripts,
          usage: this.usage,
          clock: this.clock,
          logger: this.logger,
          actions: this.actions,
        },
        {
          callId,
          chat: callChat,
          model,
          tools,
          maxCallMs: this.config.voice.maxCallMs,
          silenceMs: this.config.voice.silenceMs,
          hold: firstHold,
          speedOf: (m) => this.speedOf(m),
        },
      );
      const live = call;
      const control = await provider
        .openControl(callId, {
          event: (event) => live.handle(event),
          closed: (reason) => void live.end(reason),
        })
        .catch((error: unknown) => {
          throw providerFailure(error);
        });
      live.attach(control);
      live.onEnded = () => {
        if (this.live === live) this.setLive(null);
      };
      this.setLive(live);
      if (!found) this.transcripts.announceCreated(callChat);
      this.logger.log(
        `Voice call ${callId} started in chat ${chatObjectId.toHexString()} (${model}, mode ${startMode})`,
      );
      return {
        sdp: created.answer,
        callId,
        chatId: chatObjectId.toHexString(),
      };
    } catch (error) {
      // Nothing is left behind: no call at the provider, no empty chat, no hold.
      if (provider && callId) await provider.hangup(callId);
      await firstHold?.release();
      if (newChat) {
        const made = await newChat;
        if ('chat' in made)
          await this.transcripts
            .discard(made.chat)
            .catch((cleanup: Error) =>
              this.logger.warn(
                `Could not remove the chat of a call that did not start: ${cleanup.message}`,
              ),
            );
      }
      throw error;
    } finally {
      if (this.starting === slot) this.starting = null;
    }
  }

  /** The live call, if any. */
  current(): { callId: string; chatId: string; startedAt: string } | null {
    const live = this.live;
    return live && !live.isEnded
      ? {
          callId: live.callId,
          chatId: live.chat._id.toHexString(),
          startedAt: live.startedAt.toISOString(),
        }
      : null;
  }

  async hangup(callId: string): Promise<void> {
    const live = this.live;
    if (!live || live.callId !== callId || live.isEnded)
      throw new NotFoundException(`No live voice call '${callId}'`);
    await live.end('the owner hung up');
  }

  /** Stopping the API leaves no call running at the provider; what was said is stored first. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.live?.end('the server is stopping');
  }

  /**
   * Each response of a call held to the budget: the session's prompt and tools, the
   * conversation so far and the output limit (both providers' calls use it).
   */
  responseBudget(
    tools: Pick<ToolSession, 'systemPrompt' | 'specs'>,
    model: string,
    provider: ModelProvider,
    maxOutputTokens: number,
  ): VoiceCallBudget {
    return {
      holdResponse: (contextTokens: number, goodbye: boolean) =>
        this.budget.hold(
          {
            source: 'voice',
            modelId: model,
            provider,
            allowOverBudget: goodbye,
          },
          {
            inputTokens:
              promptTokensOf(
                Buffer.byteLength(tools.systemPrompt ?? '', 'utf8') +
                  Buffer.byteLength(JSON.stringify(tools.specs), 'utf8'),
              ) +
              contextTokens +
              SPEECH_MARGIN_TOKENS,
            outputTokens: goodbye ? GOODBYE_OUTPUT_TOKENS : maxOutputTokens,
            audio: true,
          },
        ),
    };
  }

  /** The first response's hold, before anything is asked of the provider: a call over the caps is a 409. */
  async firstHold(budget: VoiceCallBudget): Promise<SpendHold> {
    return budget.holdResponse(0, false).catch((error: unknown) => {
      if (error instanceof BudgetRefusal)
        throw new ConflictException(
          `${error.message.replace(/ Raise it in Settings, or allow this one reply\.$/, ' Raise it in Settings to call.')}`,
        );
      throw error;
    });
  }

  /** The pending actions a call's spoken yes approves through. */
  get pendingActions(): PendingActionsService {
    return this.actions;
  }

  /** Holds the one place for a call another path starts (the Gemini relay); `release` frees it. */
  hold(): string {
    this.claim();
    return (this.starting = `starting-${randomUUID()}`);
  }

  release(slot: string): void {
    if (this.starting === slot) this.starting = null;
  }

  /** Makes a call started elsewhere the live one: hang-up, `current` and shutdown see it. */
  adopt(call: VoiceCall, onEnded?: (reason: string) => void): void {
    call.onEnded = (reason) => {
      if (this.live === call) this.setLive(null);
      onEnded?.(reason);
    };
    this.setLive(call);
  }

  private claim(): void {
    const live = this.current();
    if (live)
      throw new ConflictException(
        `A voice call is already live ('${live.callId}' in chat ${live.chatId}): hang it up first.`,
      );
    if (this.starting)
      throw new ConflictException(
        'Another voice call is being started: wait for it or hang it up first.',
      );
  }
}

function checkSdp(value: unknown): string {
  if (typeof value !== 'string')
    throw new BadRequestException('sdp must be the SDP offer, as a string');
  if (!value.trim()) throw new BadRequestException('sdp must not be empty');
  if (Buffer.byteLength(value, 'utf8') > MAX_SDP_BYTES)
    throw new BadRequestException(
      `sdp is longer than ${MAX_SDP_BYTES / 1024} KiB`,
    );
  if (!value.startsWith('v=0'))
    throw new BadRequestException('sdp must be an SDP offer (starting v=0)');
  return value;
}

export function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !value.trim() || value.length > 200)
    throw new BadRequestException(`${name} must be a non-empty string`);
  return value.trim();
}

/** A provider failure as the owner reads it (502: the provider, not the request, failed). */
export function providerFailure(error: unknown): HttpException {
  if (error instanceof HttpException) return error;
  if (error instanceof RealtimeProviderError)
    return new HttpException(error.message, HttpStatus.BAD_GATEWAY);
  return new HttpException(
    'The voice call could not be started because of an internal error; see the server log.',
    HttpStatus.INTERNAL_SERVER_ERROR,
  );
}
