import { AiToolRegistry } from '../../ai-tools/ai-tool-registry';
import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import type {
  PulseSettings,
  PulseView,
  UpdatePulseRequest,
} from '@metatronos/shared-types';
import {
  localDateKey,
  nextPulseSlot,
  pulseIntervalMinutes,
  remainingPulsesToday,
} from '../schedule-math/pulse-schedule';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import { SettingsService } from '../../settings/settings.service';
import {
  checkPulseInput,
  REST_FIELD_NAMES,
  truncateNotes,
  type PulseFieldNames,
} from './pulse-settings-input';
import { PULSE_STATE_ID, PulseStateRecord } from './schemas/pulse-state.schema';

/** Pulse is off until the owner (or the AI) turns it on; these are the settings it then starts from. */
export const DEFAULT_PULSE_SETTINGS: PulseSettings = {
  enabled: false,
  activeDays: [0, 1, 2, 3, 4, 5, 6],
  pulsesPerDay: 12,
  quietHours: [{ start: '22:00', end: '07:00' }],
  notes: '',
  mode: 'automations',
};

export type PulseChangedBy = 'owner' | 'ai' | 'schedule';

/** The whole Pulse document with defaults filled in. */
export interface PulseState extends PulseSettings {
  notesUpdatedAt: Date | null;
  pulsesToday: number;
  pulsesTodayDate: string | null;
  lastPulseAt: Date | null;
  lastSlotAt: Date | null;
  chatId: Types.ObjectId | null;
}

/** Pulse settings, the AI's continuity notes and the day's counters (one document, cached). */
@Injectable()
export class PulseService {
  private cached: Promise<PulseState> | null = null;

  constructor(
    @InjectModel(PulseStateRecord.name)
    private readonly pulse: Model<PulseStateRecord>,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly tools: AiToolRegistry,
  ) {}

  /** A restored backup replaced the Pulse document: read it again. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.cached = null;
  }

  state(): Promise<PulseState> {
    this.cached ??= this.load().catch((error) => {
      this.cached = null;
      throw error;
    });
    return this.cached;
  }

  async view(running = false): Promise<PulseView> {
    const [state, { timezone }] = await Promise.all([
      this.state(),
      this.settings.get(),
    ]);
    return computePulseView(state, timezone, this.clock.now(), running);
  }

  /** Checks every field, then writes them all or nothing. */
  async update(
    request: UpdatePulseRequest | Record<string, unknown>,
    by: PulseChangedBy,
    names: PulseFieldNames = REST_FIELD_NAMES,
  ): Promise<PulseState> {
    const fields = checkPulseInput(
      request,
      names,
      this.tools.modes().map((m) => m.name),
    );
    const now = this.clock.now();
    const set: Partial<PulseStateRecord> = { ...fields, updatedAt: now };
    if (fields.notes !== undefined) set.notesUpdatedAt = now;
    // Turning Pulse on starts from now: slots passed while it was off are not owed.
    if (fields.enabled === true && !(await this.state()).enabled)
      set.lastSlotAt = now;
    return this.write(set, by);
  }

  async updateNotes(notes: string, by: PulseChangedBy): Promise<PulseState> {
    const now = this.clock.now();
    return this.write(
      { notes: truncateNotes(notes), notesUpdatedAt: now, updatedAt: now },
      by,
    );
  }

  /** A slot was handled (fired or not): it is never handled again. */
  async markSlot(slot: Date): Promise<PulseState> {
    return this.write({ lastSlotAt: slot }, null);
  }

  /** A pulse begins: count it for the owner's local day. */
  async countPulse(at: Date, slot: Date | null): Promise<PulseState> {
    const [state, { timezone }] = await Promise.all([
      this.state(),
      this.settings.get(),
    ]);
    const today = localDateKey(at, timezone);
    const pulsesToday =
      state.pulsesTodayDate === today ? state.pulsesToday + 1 : 1;
    const set: Partial<PulseStateRecord> = {
      pulsesToday,
      pulsesTodayDate: today,
      lastPulseAt: at,
    };
    if (slot) set.lastSlotAt = slot;
    return this.write(set, 'schedule');
  }

  async setChat(chatId: Types.ObjectId): Promise<void> {
    await this.write({ chatId }, null);
  }

  private async write(
    set: Partial<PulseStateRecord>,
    by: PulseChangedBy | null,
  ): Promise<PulseState> {
    await this.state();
    await this.pulse
      .updateOne({ _id: PULSE_STATE_ID }, { $set: set }, { upsert: true })
      .exec();
    this.cached = null;
    const state = await this.state();
    if (by)
      this.events.emit('pulse.updated', {
        by,
        at: this.clock.now().toISOString(),
      });
    // Awaited: the scheduler has planned the next pulse before the caller (a PATCH, a tool) answers.
    await this.events.emitAndWait('pulse.saved', {
      at: this.clock.now().toISOString(),
    });
    return state;
  }

  private async load(): Promise<PulseState> {
    const stored = await this.pulse
      .findById(PULSE_STATE_ID)
      .lean<PulseStateRecord>()
      .exec();
    return toPulseState(stored);
  }
}

export function toPulseState(
  stored: Partial<PulseStateRecord> | null,
): PulseState {
  const checked = (() => {
    try {
      return checkPulseInput(
        {
          enabled: stored?.enabled,
          activeDays: stored?.activeDays,
          pulsesPerDay: stored?.pulsesPerDay,
          quietHours: stored?.quietHours,
          mode: stored?.mode ?? undefined,
        },
        REST_FIELD_NAMES,
      );
    } catch {
      return {};
    }
  })();
  return {
    ...DEFAULT_PULSE_SETTINGS,
    ...checked,
    notes: typeof stored?.notes === 'string' ? truncateNotes(stored.notes) : '',
    notesUpdatedAt: stored?.notesUpdatedAt ?? null,
    pulsesToday: stored?.pulsesToday ?? 0,
    pulsesTodayDate: stored?.pulsesTodayDate ?? null,
    lastPulseAt: stored?.lastPulseAt ?? null,
    lastSlotAt: stored?.lastSlotAt ?? null,
    chatId: stored?.chatId ?? null,
  };
}

/** The next slot to fire: after the last one handled and after now. */
export function nextPulseDue(
  state: PulseState,
  timezone: string,
  now: Date,
): Date | null {
  if (!state.enabled) return null;
  const after =
    state.lastSlotAt && state.lastSlotAt > now ? state.lastSlotAt : now;
  return nextPulseSlot(state, timezone, after);
}

export function computePulseView(
  state: PulseState,
  timezone: string,
  now: Date,
  running: boolean,
): PulseView {
  const today = localDateKey(now, timezone);
  return {
    enabled: state.enabled,
    activeDays: state.activeDays,
    pulsesPerDay: state.pulsesPerDay,
    quietHours: state.quietHours,
    notes: state.notes,
    mode: state.mode,
    remaining: state.enabled
      ? remainingPulsesToday(state, timezone, now, state.lastSlotAt)
      : 0,
    nextPulseAt: nextPulseDue(state, timezone, now)?.toISOString() ?? null,
    intervalMinutes: pulseIntervalMinutes(state.pulsesPerDay),
    pulsesToday: state.pulsesTodayDate === today ? state.pulsesToday : 0,
    lastPulseAt: state.lastPulseAt?.toISOString() ?? null,
    chatId: state.chatId?.toHexString() ?? null,
    running,
    timezone,
    notesUpdatedAt: state.notesUpdatedAt?.toISOString() ?? null,
  };
}
