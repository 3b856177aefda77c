import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSlideToggle } from '@angular/material/slide-toggle';
import { MatSnackBar } from '@angular/material/snack-bar';
import { RouterLink } from '@angular/router';
import {
  EMPTY,
  Subject,
  catchError,
  filter,
  merge,
  skip,
  switchMap,
  tap,
  of,
} from 'rxjs';
import {
  PULSE_NOTES_MAX_LENGTH,
  PULSES_PER_DAY_CHOICES,
  QUIET_HOURS_MAX_RANGES,
  type CronRunView,
  type ModeView,
  type PulseSettings,
  type PulseView,
  type PulsesPerDay,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { warnBeforeUnload } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';
import { LengthCounter } from '../ui/length-counter';
import { ServerError } from '../ui/server-error';
import {
  WEEKDAYS,
  crossesMidnight,
  formatInZone,
  formatInterval,
  pulsesPerDayLabel,
} from './automation-format';
import {
  type PulseDraft,
  type QuietHoursRow,
  changedSettingFields,
  pulseChanges,
  pulseDraftErrors,
  pulseDraftFrom,
  pulseSettings,
  quietHoursRow,
} from './pulse-draft';
import { RunList } from './run-list';
import { modeDescription, modeLabel } from '../chat/mode-words';

/** How many recent pulses the card lists. */
export const RECENT_PULSES = 5;

/** The Pulse heartbeat: when Metatron wakes up by itself, its continuity notes, and its recent pulses. */
@Component({
  selector: 'mt-pulse-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatHint,
    MatLabel,
    MatInput,
    MatProgressBar,
    MatSlideToggle,
    RouterLink,
    Icon,
    ServerError,
    RunList,
    InvalidInput,
    LengthCounter,
  ],
  templateUrl: './pulse-card.html',
  styleUrl: './pulse-card.scss',
})
export class PulseCard {
  protected readonly modeLabel = modeLabel;
  protected readonly modeDescription = modeDescription;
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly reloadRuns$ = new Subject<void>();
  private lastChangeBy: 'owner' | 'ai' | 'schedule' = 'owner';

  protected readonly weekdays = WEEKDAYS;
  protected readonly perDayChoices = PULSES_PER_DAY_CHOICES.map((value) => ({
    value,
    label: `${value} a day · ${pulsesPerDayLabel(value)}`,
  }));
  protected readonly notesMax = PULSE_NOTES_MAX_LENGTH;
  protected readonly quietMax = QUIET_HOURS_MAX_RANGES;
  protected readonly crossesMidnight = crossesMidnight;

  /** The server's latest view: the figures always follow it. */
  protected readonly view = signal<PulseView | null>(null);
  /** The settings the draft started from. */
  private readonly base = signal<PulseSettings | null>(null);
  protected readonly draft = signal<PulseDraft | null>(null);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);
  /** Settings changed on the server while there were unsaved edits here: what changed. */
  protected readonly changedElsewhere = signal<'notes' | 'settings' | null>(
    null,
  );
  protected readonly starting = signal(false);
  protected readonly runError = signal<string | null>(null);
  protected readonly runs = signal<CronRunView[] | null>(null);
  protected readonly runsError = signal<string | null>(null);

  protected readonly changes = computed(() => {
    const base = this.base();
    const draft = this.draft();
    return base && draft ? pulseChanges(base, draft) : {};
  });
  protected readonly dirty = computed(
    () => Object.keys(this.changes()).length > 0,
  );
  protected readonly errors = computed(() => {
    const draft = this.draft();
    return draft
      ? pulseDraftErrors(draft)
      : { rows: new Map<number, string>(), form: [] };
  });
  protected readonly canSave = computed(
    () =>
      this.dirty() &&
      this.errors().rows.size === 0 &&
      this.errors().form.length === 0 &&
      !this.saving(),
  );
  protected readonly notesLength = computed(
    () => this.draft()?.notes.length ?? 0,
  );

  protected readonly figures = computed(() => {
    const view = this.view();
    if (!view) return null;
    let nextReason = '';
    if (!view.nextPulseAt) {
      if (!view.enabled) nextReason = 'Pulse is off';
      else if (view.activeDays.length === 0) nextReason = 'no active days';
      else nextReason = 'none scheduled';
    }
    return {
      next: view.nextPulseAt
        ? formatInZone(view.nextPulseAt, view.timezone)
        : '—',
      nextReason,
      last: view.lastPulseAt
        ? formatInZone(view.lastPulseAt, view.timezone)
        : 'Never',
      interval: `every ${formatInterval(view.intervalMinutes)}`,
    };
  });

  /** Reloads on every change, even with unsaved edits: `follow` keeps them and says what changed. */
  private readonly live = liveResource({
    load: () => this.api.pulse(),
    apply: (view) => this.follow(view),
    hasValue: () => !!this.view(),
    failure: "Couldn't load the Pulse settings",
    event: {
      name: 'pulse.updated',
      seen: (event) => {
        this.lastChangeBy = event.by;
      },
    },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  constructor() {
    this.api
      .tools()
      .pipe(
        catchError(() => of(null)),
        takeUntilDestroyed(),
      )
      .subscribe((tools) => this.modes.set(tools?.modes ?? []));
    this.reloadRuns$
      .pipe(
        switchMap(() =>
          this.api.pulseRuns(RECENT_PULSES).pipe(
            tap((runs) => {
              this.runs.set(runs);
              this.runsError.set(null);
            }),
            catchError((error: unknown) => {
              this.runsError.set(
                inlineErrorMessage(error, "Couldn't load the recent pulses."),
              );
              return EMPTY;
            }),
          ),
        ),
        takeUntilDestroyed(),
      )
      .subscribe();

    const events = inject(EventStream);
    merge(
      events.on('pulse.fired'),
      events
        .on('automation.run')
        .pipe(filter(({ run }) => run.kind === 'pulse')),
    )
      .pipe(takeUntilDestroyed())
      .subscribe(() => {
        this.reload();
        this.reloadRuns();
      });

    toObservable(inject(ServerStatus).recovered)
      .pipe(skip(1), takeUntilDestroyed())
      .subscribe(() => this.reloadRuns());

    this.reloadRuns();

    warnBeforeUnload(this.dirty, () => this.save());
  }

  protected reloadRuns(): void {
    this.reloadRuns$.next();
  }

  protected patch(changes: Partial<PulseDraft>): void {
    this.draft.update((draft) => draft && { ...draft, ...changes });
    if (this.saveError()) this.saveError.set(null);
  }

  protected toggleDay(day: number): void {
    const days = this.draft()?.activeDays ?? [];
    this.patch({
      activeDays: days.includes(day)
        ? days.filter((d) => d !== day)
        : [...days, day].sort((a, b) => a - b),
    });
  }

  /** The modes a pulse can start in (`GET /api/tools`); empty until loaded, or when loading failed. */
  protected readonly modes = signal<readonly ModeView[]>([]);

  protected setMode(mode: string): void {
    if (this.modes().some((m) => m.name === mode)) this.patch({ mode });
  }

  protected setPulsesPerDay(value: string): void {
    const perDay = Number(value) as PulsesPerDay;
    if (PULSES_PER_DAY_CHOICES.includes(perDay))
      this.patch({ pulsesPerDay: perDay });
  }

  protected addQuietHours(): void {
    const rows = this.draft()?.quietHours ?? [];
    if (rows.length < QUIET_HOURS_MAX_RANGES)
      this.patch({ quietHours: [...rows, quietHoursRow()] });
  }

  protected updateQuietHours(
    key: number,
    changes: Partial<QuietHoursRow>,
  ): void {
    const rows = this.draft()?.quietHours ?? [];
    this.patch({
      quietHours: rows.map((row) =>
        row.key === key ? { ...row, ...changes } : row,
      ),
    });
  }

  protected removeQuietHours(key: number): void {
    this.patch({
      quietHours: (this.draft()?.quietHours ?? []).filter(
        (row) => row.key !== key,
      ),
    });
  }

  /** Drops the edits for what the server has now. */
  protected discard(): void {
    const view = this.view();
    if (view) this.apply(view);
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updatePulse(this.changes()).subscribe({
      next: (view) => {
        this.saving.set(false);
        this.apply(view);
        this.snackBar.open('Pulse settings saved.', undefined, {
          duration: 3000,
        });
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  protected runNow(): void {
    this.starting.set(true);
    this.runError.set(null);
    this.api.runPulse().subscribe({
      next: (run) => {
        this.starting.set(false);
        // The pulse's events may have come first (a quick pulse): then the reload they caused knows better.
        if (!this.runs()?.some((item) => item.id === run.id)) {
          this.view.update((view) => view && { ...view, running: true });
          this.runs.update((runs) =>
            [run, ...(runs ?? [])].slice(0, RECENT_PULSES),
          );
        }
        this.snackBar.open('Pulse started.', undefined, { duration: 3000 });
      },
      error: (error: unknown) => {
        this.starting.set(false);
        this.runError.set(inlineErrorMessage(error, "Couldn't start a pulse."));
      },
    });
  }

  /** A fresh view from the server: the figures follow; the form too, unless it has unsaved edits. */
  private follow(view: PulseView): void {
    const base = this.base();
    if (!base || !this.dirty()) {
      this.apply(view);
      return;
    }
    this.view.set(view);
    const changed = changedSettingFields(base, pulseSettings(view));
    if (changed.length === 0) return;
    this.changedElsewhere.set(
      changed.length === 1 &&
        changed[0] === 'notes' &&
        this.lastChangeBy === 'ai'
        ? 'notes'
        : 'settings',
    );
  }

  private apply(view: PulseView): void {
    const settings = pulseSettings(view);
    this.view.set(view);
    this.base.set(settings);
    this.draft.set(pulseDraftFrom(settings));
    this.changedElsewhere.set(null);
  }
}
