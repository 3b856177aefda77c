import {
  ConflictException,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { Types } from 'mongoose';
import type { CronRunView, RunTrigger } from '@metatronos/shared-types';
import { AutomationRunsService } from '../automation-runs.service';
import { AutomationTicker, type Schedulable } from '../automation-ticker';
import { toRunView } from '../run-views';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import { formatPromptDateTime } from '../../system-instruction/core-prompt-sections';
import { SettingsService } from '../../settings/settings.service';
import { pulsePromptOptions } from './pulse-prompt';
import {
  computePulseView,
  nextPulseDue,
  PulseService,
  type PulseState,
} from './pulse.service';

/** A slot found this late (the machine slept, the app was busy starting) is recorded as missed instead of fired. */
export const PULSE_LATE_LIMIT_MS = 10 * 60_000;
export const PULSE_CHAT_TITLE = 'Pulse';

/**
 * Fires Pulse at its slots: one pulse at a time (a slot that comes while the
 * previous pulse still runs is skipped, not stacked), in the one Pulse chat.
 * Slots passed while the app was down are not caught up: Pulse is a heartbeat.
 */
@Injectable()
export class PulseScheduler implements Schedulable, OnApplicationBootstrap {
  readonly name = 'pulse';
  private readonly logger = new Logger(PulseScheduler.name);
  private due: Date | null = null;
  private running = false;

  constructor(
    private readonly pulse: PulseService,
    private readonly runs: AutomationRunsService,
    private readonly settings: SettingsService,
    private readonly ticker: AutomationTicker,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {
    ticker.register(this);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh().catch((error: Error) =>
      this.logger.error(`Could not schedule Pulse: ${error.message}`),
    );
  }

  isRunning(): boolean {
    return this.running;
  }

  nextDueAt(): Date | null {
    return this.due;
  }

  /** Another timezone moves the slots. */
  @OnEvent('settings.updated')
  async onSettingsUpdated(): Promise<void> {
    await this.refresh();
  }

  /** Any write to the Pulse document (settings, a handled slot, a counted pulse) may move the next slot. */
  @OnEvent('pulse.saved')
  async onPulseSaved(): Promise<void> {
    await this.refresh();
  }

  async refresh(): Promise<void> {
    const [state, { timezone }] = await Promise.all([
      this.pulse.state(),
      this.settings.get(),
    ]);
    this.due = nextPulseDue(state, timezone, this.clock.now());
    this.ticker.rearm();
  }

  async tick(now: Date): Promise<void> {
    const slot = this.due;
    if (!slot || slot > now) return;
    // Moved on before anything is awaited, so a second tick cannot take the same slot.
    this.due = null;
    const start = {
      kind: 'pulse' as const,
      jobId: null,
      trigger: 'schedule' as RunTrigger,
      dueAt: slot,
    };
    const state = await this.pulse.state();
    if (now.getTime() - slot.getTime() > PULSE_LATE_LIMIT_MS) {
      await this.pulse.markSlot(slot);
      const { timezone } = await this.settings.get();
      await this.runs.recordWithoutTurn(
        { ...start, chatId: state.chatId?.toHexString() ?? null },
        'missed',
        `The pulse due at ${formatPromptDateTime(slot, timezone)} was found ${Math.round((now.getTime() - slot.getTime()) / 60_000)} minutes late (the machine was asleep or busy) and was not run.`,
      );
      return;
    }
    if (this.running) {
      await this.pulse.markSlot(slot);
      await this.runs.recordWithoutTurn(
        { ...start, chatId: state.chatId?.toHexString() ?? null },
        'skipped',
        'busy',
      );
      return;
    }
    await this.fire('schedule', slot, this.clock.now());
  }

  /** "Run a pulse now": counts as a pulse; 409 while one runs. */
  async runNow(): Promise<CronRunView> {
    if (this.running)
      throw new ConflictException(
        'A pulse is already running. Wait for it to finish.',
      );
    return this.fire('manual', null, this.clock.now());
  }

  private async fire(
    trigger: RunTrigger,
    slot: Date | null,
    startedAt: Date,
  ): Promise<CronRunView> {
    this.running = true;
    try {
      const counted = await this.pulse.countPulse(startedAt, slot);
      const chatId = await this.ensureChat(counted);
      const run = await this.runs.begin(
        { kind: 'pulse', jobId: null, trigger, dueAt: slot, chatId },
        startedAt,
      );
      this.events.emit('pulse.fired', {
        runId: run._id.toHexString(),
        chatId,
        at: startedAt.toISOString(),
      });
      const { timezone } = await this.settings.get();
      const view = computePulseView(counted, timezone, startedAt, true);
      void this.runs
        .runTurn(
          run,
          pulseMessage(view.pulsesToday, startedAt, timezone),
          {
            source: 'pulse',
            // A pulse starts in its mode (automations unless the owner chose another); set_mode reaches the rest.
            mode: counted.mode,
            prompt: pulsePromptOptions(view, startedAt),
          },
          () => {
            // Free before the run reads as ended, so "Run a pulse now" right after it is accepted.
            this.running = false;
          },
        )
        .finally(() => {
          this.running = false;
          this.events.emit('pulse.updated', {
            by: 'schedule',
            at: this.clock.now().toISOString(),
          });
        });
      return toRunView(run);
    } catch (error) {
      this.running = false;
      throw error;
    }
  }

  /** The Pulse chat, made on the first pulse and again if the owner deleted it. */
  private async ensureChat(state: PulseState): Promise<string> {
    const { chatId, created } = await this.runs.chatFor(
      state.chatId,
      PULSE_CHAT_TITLE,
      'pulse',
    );
    if (created) await this.pulse.setChat(new Types.ObjectId(chatId));
    return chatId;
  }
}

/** The user message of a pulse turn. */
export function pulseMessage(
  pulseNumber: number,
  at: Date,
  timezone: string,
): string {
  return `Pulse #${pulseNumber} of today, ${formatPromptDateTime(at, timezone)}. This is your scheduled heartbeat: decide what is worth doing now.`;
}
