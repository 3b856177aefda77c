import { HttpClient } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  computed,
  inject,
  input,
  output,
  signal,
} from '@angular/core';
import { firstValueFrom } from 'rxjs';
import type {
  PendingActionView,
  StartRelayCallResponse,
  StartVoiceCallResponse,
  VoiceProviderView,
} from '@metatronos/shared-types';
import { ActionsApi } from '../actions/actions-api';
import { PendingActions } from '../actions/pending-actions';
import { API_BASE } from '../core/api-client';
import {
  nextStatus,
  voiceProblem,
  type VoiceCallStatus,
} from './voice-call-state';
import { VoiceRelayLink } from './voice-relay-link';

const IDLE: VoiceCallStatus = { phase: 'idle', tool: null, mode: null };

/**
 * The microphone button by the composer and, during a call, the call bar. The
 * browser holds no key: it sends its SDP offer (microphone + data channel) to
 * the API, which starts the call at the provider and runs the tools there; the
 * data channel only tells the bar what happens. Alt+M starts or ends a call.
 */
@Component({
  selector: 'mt-voice-call-bar',
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: {
    class: 'voice-call',
    '(document:keydown.alt.m)': 'toggle($event)',
  },
  template: `
    @if (active()) {
      <div
        class="call-bar"
        role="status"
        data-testid="call-bar"
        aria-live="polite"
        [attr.data-audio]="hearing() ? 'playing' : null"
      >
        <span class="call-state" data-testid="call-state">{{ label() }}</span>
        @if (status().mode; as mode) {
          <span class="call-mode" data-testid="call-mode">{{ mode }}</span>
        }
        <span class="level" aria-hidden="true"
          ><span class="level-fill" [style.width.%]="level()"></span
        ></span>
        <button
          type="button"
          class="call-button"
          data-testid="call-mute"
          [attr.aria-pressed]="muted()"
          (click)="toggleMute()"
        >
          {{ muted() ? 'Unmute' : 'Mute' }}
        </button>
        <button
          type="button"
          class="call-button hang-up"
          data-testid="call-hang-up"
          (click)="hangUp()"
        >
          Hang up
        </button>
        @if (waiting(); as action) {
          <div class="call-action" data-testid="call-action">
            <span class="call-action-why">{{
              action.tainted
                ? 'Waits for you (this call read ' +
                  (action.taint[0]?.text ?? 'third-party content') +
                  ', so a spoken yes cannot approve it):'
                : 'Waits for your yes:'
            }}</span>
            <span
              class="call-action-summary"
              data-testid="call-action-summary"
              >{{ action.summary }}</span
            >
            <button
              type="button"
              class="call-button"
              data-testid="call-action-confirm"
              [disabled]="deciding()"
              (click)="decide(action, 'approve')"
            >
              Confirm
            </button>
            <button
              type="button"
              class="call-button"
              data-testid="call-action-cancel"
              [disabled]="deciding()"
              (click)="decide(action, 'discard')"
            >
              Cancel
            </button>
          </div>
        }
      </div>
    } @else {
      <button
        type="button"
        class="mic"
        data-testid="mic-button"
        aria-label="Talk to Metatron (Alt+M)"
        title="Talk to Metatron (Alt+M)"
        [disabled]="disabled()"
        (click)="start()"
      >
        <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">
          <path
            d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11h-2z"
          />
        </svg>
      </button>
    }
    @if (problem(); as text) {
      <p class="call-problem" role="alert" data-testid="call-problem">
        {{ text }}
      </p>
    }
  `,
  styles: `
    :host {
      display: contents;
    }
    .mic {
      display: inline-flex;
      align-items: center;
      justify-content: center;
      width: 40px;
      height: 40px;
      border: none;
      border-radius: 50%;
      background: transparent;
      color: inherit;
      cursor: pointer;
      flex: none;
    }
    .mic svg {
      width: 24px;
      height: 24px;
      fill: currentColor;
    }
    .mic:disabled {
      opacity: 0.4;
      cursor: default;
    }
    .call-bar {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 8px;
      flex-basis: 100%;
      padding: 6px 8px;
      border-radius: 8px;
      background: var(--mt-surface-2, rgba(127, 127, 127, 0.12));
    }
    .call-state {
      font-weight: 600;
    }
    .call-mode {
      font-size: 0.85em;
      opacity: 0.8;
    }
    .level {
      flex: 1 1 60px;
      min-width: 40px;
      height: 6px;
      border-radius: 3px;
      overflow: hidden;
      background: rgba(127, 127, 127, 0.25);
    }
    .level-fill {
      display: block;
      height: 100%;
      background: currentColor;
    }
    .call-button {
      border: 1px solid currentColor;
      border-radius: 16px;
      padding: 4px 10px;
      background: transparent;
      color: inherit;
      cursor: pointer;
    }
    .hang-up {
      color: #c62828;
    }
    .call-action {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 6px 8px;
      flex-basis: 100%;
      min-width: 0;
    }
    .call-action-summary {
      flex: 1 1 180px;
      min-width: 0;
      overflow-wrap: anywhere;
      font-weight: 600;
    }
    .call-problem {
      flex-basis: 100%;
      margin: 4px 0;
      color: #c62828;
    }
  `,
})
export class VoiceCallBar {
  private readonly http = inject(HttpClient);
  private readonly pendingActions = inject(PendingActions);
  private readonly actionsApi = inject(ActionsApi);
  /** The chat the call talks in (absent for a draft: the server makes a new chat). */
  readonly chatId = input<string | null>(null);
  readonly disabled = input(false);
  /** The call started in a chat (a new one for a draft). */
  readonly started = output<string>();

  protected readonly status = signal<VoiceCallStatus>(IDLE);
  protected readonly problem = signal<string | null>(null);
  protected readonly muted = signal(false);
  protected readonly level = signal(0);
  /** Metatron's audio is reaching the speaker (the remote track plays). */
  protected readonly hearing = signal(false);
  /** The chat of the live call (a draft's new chat once the server made it). */
  private readonly callChat = signal<string | null>(null);
  protected readonly deciding = signal(false);
  /** The newest send or deletion of this call's chat that waits for the owner (spoken yes, or Confirm here). */
  protected readonly waiting = computed(() => {
    const chatId = this.callChat();
    if (!chatId) return null;
    return (
      this.pendingActions
        .list()
        .find(
          (action) =>
            action.source === 'voice' &&
            action.chatId === chatId &&
            action.status === 'pending',
        ) ?? null
    );
  });
  protected readonly active = computed(
    () => !['idle', 'ended', 'failed'].includes(this.status().phase),
  );
  protected readonly label = computed(() => {
    const s = this.status();
    switch (s.phase) {
      case 'connecting':
        return 'Connecting…';
      case 'listening':
        return 'Listening';
      case 'speaking':
        return 'Metatron is speaking';
      case 'tool':
        return `Running ${s.tool ?? 'a tool'}…`;
      default:
        return '';
    }
  });

  private peer: RTCPeerConnection | null = null;
  private mic: MediaStream | null = null;
  private audio: HTMLAudioElement | null = null;
  private callId: string | null = null;
  private meter: number | null = null;
  private relay: VoiceRelayLink | null = null;

  constructor() {
    inject(DestroyRef).onDestroy(() => void this.hangUp());
  }

  /** Confirm or Cancel of the waiting action: the same routes as the console's Approve and Discard. */
  protected async decide(
    action: PendingActionView,
    choice: 'approve' | 'discard',
  ): Promise<void> {
    this.deciding.set(true);
    try {
      if (choice === 'approve') {
        const done = await firstValueFrom(this.actionsApi.approve(action.id));
        this.pendingActions.settle({
          action,
          outcome: {
            status: done.status,
            result: done.result,
            error: done.error ?? null,
          },
        });
      } else {
        await firstValueFrom(this.actionsApi.discard(action.id));
        this.pendingActions.settle({
          action,
          outcome: { status: 'discarded', result: null, error: null },
        });
      }
    } catch (error) {
      this.problem.set(
        voiceProblem(error) ||
          'The action could not be decided here: see Pending actions.',
      );
    } finally {
      this.deciding.set(false);
    }
  }

  protected toggle(event: Event): void {
    event.preventDefault();
    if (this.active()) void this.hangUp();
    else if (!this.disabled()) void this.start();
  }

  async start(): Promise<void> {
    if (this.active()) return;
    this.problem.set(null);
    this.status.set({ ...IDLE, phase: 'connecting' });
    try {
      if (!navigator.mediaDevices?.getUserMedia)
        throw Object.assign(new Error('no microphone'), {
          name: 'NotFoundError',
        });
      this.mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      if (await this.startRelay(this.mic)) return;
      if (typeof RTCPeerConnection === 'undefined')
        throw new Error(
          'This browser cannot make calls (no WebRTC): use a current Chrome, Edge, Firefox or Safari.',
        );
      const peer = (this.peer = new RTCPeerConnection());
      for (const track of this.mic.getAudioTracks())
        peer.addTrack(track, this.mic);
      this.audio = new Audio();
      this.audio.autoplay = true;
      this.audio.onplaying = () => this.hearing.set(true);
      peer.ontrack = (event) => {
        if (this.audio) this.audio.srcObject = event.streams[0] ?? null;
      };
      const events = peer.createDataChannel('oai-events');
      events.onmessage = (message) => {
        try {
          this.status.update((s) =>
            nextStatus(s, JSON.parse(String(message.data))),
          );
        } catch {
          // Not JSON: nothing to show.
        }
      };
      peer.onconnectionstatechange = () => {
        if (
          peer.connectionState === 'connected' &&
          this.status().phase === 'connecting'
        )
          this.status.update((s) => ({ ...s, phase: 'listening' }));
        if (
          peer.connectionState === 'failed' ||
          peer.connectionState === 'disconnected'
        ) {
          this.problem.set(
            'The network is lost: the call was cut. Press the microphone to call again.',
          );
          void this.hangUp('failed');
        }
      };
      await peer.setLocalDescription(await peer.createOffer());
      const chatId = this.chatId();
      const answer = await firstValueFrom(
        this.http.post<StartVoiceCallResponse>(`${API_BASE}/voice/calls`, {
          sdp: peer.localDescription?.sdp,
          ...(chatId ? { chatId } : {}),
        }),
      );
      this.callId = answer.callId;
      this.callChat.set(answer.chatId);
      // The nav's badge usually follows the list already; a call needs it too.
      this.pendingActions.follow();
      await peer.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
      this.startMeter(this.mic);
      this.started.emit(answer.chatId);
    } catch (error) {
      this.problem.set(voiceProblem(error));
      await this.hangUp('failed');
    }
  }

  protected toggleMute(): void {
    const muted = !this.muted();
    for (const track of this.mic?.getAudioTracks() ?? [])
      track.enabled = !muted;
    this.muted.set(muted);
    if (this.relay) this.relay.muted = muted;
  }

  async hangUp(phase: 'ended' | 'failed' = 'ended'): Promise<void> {
    const callId = this.callId;
    this.callId = null;
    if (this.meter !== null) cancelAnimationFrame(this.meter);
    this.meter = null;
    this.level.set(0);
    for (const track of this.mic?.getTracks() ?? []) track.stop();
    this.mic = null;
    this.peer?.close();
    this.peer = null;
    this.relay?.close();
    this.relay = null;
    if (this.audio) {
      this.audio.onplaying = null;
      this.audio.srcObject = null;
    }
    this.audio = null;
    this.hearing.set(false);
    this.callChat.set(null);
    this.muted.set(false);
    this.status.set({ ...IDLE, phase });
    if (callId)
      await firstValueFrom(
        this.http.delete(
          `${API_BASE}/voice/calls/${encodeURIComponent(callId)}`,
        ),
      ).catch(() => undefined);
  }

  /** A chat whose model is a Gemini Live model talks through the server's relay, not WebRTC. */
  private async startRelay(mic: MediaStream): Promise<boolean> {
    const chatId = this.chatId();
    const query = chatId ? `?chatId=${encodeURIComponent(chatId)}` : '';
    const route = await firstValueFrom(
      this.http.get<VoiceProviderView>(`${API_BASE}/voice/provider${query}`),
    );
    if (route.provider !== 'gemini') return false;
    const start = await firstValueFrom(
      this.http.post<StartRelayCallResponse>(
        `${API_BASE}/voice/relay-calls`,
        chatId ? { chatId } : {},
      ),
    );
    this.callId = start.callId;
    this.relay = await VoiceRelayLink.open(start, mic, {
      status: (update) => this.status.update(update),
      ended: (reason, lost) => {
        if (lost) this.problem.set(reason);
        void this.hangUp(lost ? 'failed' : 'ended');
      },
    });
    this.startMeter(mic);
    this.started.emit(start.chatId);
    return true;
  }

  /** The microphone's level, for the meter (what the owner sees of being heard). */
  private startMeter(stream: MediaStream): void {
    if (typeof AudioContext === 'undefined') return;
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    context.createMediaStreamSource(stream).connect(analyser);
    const samples = new Uint8Array(analyser.fftSize);
    const tick = () => {
      if (!this.mic) {
        void context.close();
        return;
      }
      analyser.getByteTimeDomainData(samples);
      let peak = 0;
      for (const s of samples) peak = Math.max(peak, Math.abs(s - 128));
      this.level.set(
        this.muted() ? 0 : Math.min(100, Math.round((peak / 128) * 100)),
      );
      this.meter = requestAnimationFrame(tick);
    };
    this.meter = requestAnimationFrame(tick);
  }
}
