import { HttpErrorResponse } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  inject,
  input,
  output,
  signal,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatSnackBar } from '@angular/material/snack-bar';
import { RouterLink } from '@angular/router';
import {
  EMPTY,
  Subject,
  catchError,
  filter,
  finalize,
  switchMap,
  tap,
} from 'rxjs';
import type { CronJobView, CronRunView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { OUTCOME_LABELS, formatInZone, runDetail } from './automation-format';
import { RunList } from './run-list';
import { actOnOwnLabel } from './act-on-own';

/** How many runs the history shows. */
export const JOB_HISTORY_LIMIT = 20;

/** Puts a run into a newest-first list: replaces the one with its id, or adds it on top. */
export function upsertRun(
  runs: CronRunView[],
  run: CronRunView,
): CronRunView[] {
  return runs.some((item) => item.id === run.id)
    ? runs.map((item) => (item.id === run.id ? run : item))
    : [run, ...runs];
}

type JobAction = 'toggle' | 'run' | 'delete';

/** One scheduled job: its schedule, state and last run, the actions on it, and its run history on demand. */
@Component({
  selector: 'mt-cron-job-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButton, MatIconButton, RouterLink, Icon, RunList],
  templateUrl: './cron-job-card.html',
  styleUrl: './cron-job-card.scss',
})
export class CronJobCard {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);
  private readonly loadHistory$ = new Subject<string>();

  readonly job = input.required<CronJobView>();
  /** The owner asked to edit the job. */
  readonly edit = output<CronJobView>();
  /** The server answered with a newer view of the job. */
  readonly changed = output<CronJobView>();
  /** The job was deleted. */
  readonly removed = output<string>();

  protected readonly busy = signal<JobAction | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly confirming = signal(false);
  protected readonly historyOpen = signal(false);
  protected readonly history = signal<CronRunView[] | null>(null);
  protected readonly historyLoading = signal(false);
  protected readonly historyError = signal<string | null>(null);

  protected readonly outcomes = OUTCOME_LABELS;
  /** The sending and deleting tools the job uses without asking, in words. */
  protected readonly actOnOwn = computed(() =>
    (this.job().actOnOwnTools ?? []).map(actOnOwnLabel).join(', '),
  );
  protected readonly nextRuns = computed(() =>
    this.job().nextRuns.map((iso) => ({
      iso,
      text: formatInZone(iso, this.job().timezone),
    })),
  );
  protected readonly lastRunAt = computed(() => {
    const run = this.job().lastRun;
    return run
      ? formatInZone(run.finishedAt ?? run.startedAt, this.job().timezone)
      : '';
  });

  protected readonly lastRunDetail = computed(() => {
    const run = this.job().lastRun;
    return run ? runDetail(run) : '';
  });

  constructor() {
    this.loadHistory$
      .pipe(
        switchMap((jobId) => {
          this.historyLoading.set(true);
          return this.api.cronJobRuns(jobId, JOB_HISTORY_LIMIT).pipe(
            tap((runs) => {
              this.history.set(runs);
              this.historyError.set(null);
            }),
            catchError((error: unknown) => {
              this.historyError.set(
                inlineErrorMessage(error, "Couldn't load the run history."),
              );
              return EMPTY;
            }),
            finalize(() => this.historyLoading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    // A run of this job started or ended: the open history follows.
    inject(EventStream)
      .on('automation.run')
      .pipe(
        filter(
          ({ run }) =>
            run.kind === 'cron' &&
            run.jobId === this.job().id &&
            this.history() !== null,
        ),
        takeUntilDestroyed(),
      )
      .subscribe(({ run }) =>
        this.history.update((runs) => upsertRun(runs ?? [], run)),
      );
  }

  protected toggleHistory(): void {
    const open = !this.historyOpen();
    this.historyOpen.set(open);
    if (open) this.loadHistory$.next(this.job().id);
  }

  protected setEnabled(enabled: boolean): void {
    this.start('toggle');
    this.api.updateCronJob(this.job().id, { enabled }).subscribe({
      next: (job) => {
        this.busy.set(null);
        this.changed.emit(job);
      },
      error: (error: unknown) =>
        this.fail(
          error,
          enabled ? "Couldn't resume the job." : "Couldn't pause the job.",
        ),
    });
  }

  protected runNow(): void {
    const job = this.job();
    this.start('run');
    this.api.runCronJob(job.id).subscribe({
      next: (run) => {
        this.busy.set(null);
        // The run's events may have come first (a quick run): then they know better than this answer.
        if (this.job().lastRun?.id !== run.id)
          this.changed.emit({ ...this.job(), running: true });
        this.history.update((runs) =>
          runs && !runs.some((item) => item.id === run.id)
            ? [run, ...runs]
            : runs,
        );
        this.snackBar.open(`“${job.name}” is running.`, undefined, {
          duration: 3000,
        });
      },
      error: (error: unknown) => {
        this.fail(error, "Couldn't start the job.");
        // 409: a run started meanwhile (another click, tab or the schedule): show it as running.
        if (error instanceof HttpErrorResponse && error.status === 409)
          this.changed.emit({ ...this.job(), running: true });
      },
    });
  }

  protected askDelete(): void {
    this.error.set(null);
    this.confirming.set(true);
    this.focus('cancel-delete-job');
  }

  protected cancelDelete(): void {
    this.confirming.set(false);
    this.focus('delete-job');
  }

  protected confirmDelete(): void {
    const job = this.job();
    this.confirming.set(false);
    this.start('delete');
    this.api.deleteCronJob(job.id).subscribe({
      next: () => {
        this.busy.set(null);
        this.removed.emit(job.id);
        this.snackBar.open(`Deleted “${job.name}”.`, undefined, {
          duration: 3000,
        });
      },
      error: (error: unknown) => this.fail(error, "Couldn't delete the job."),
    });
  }

  private start(action: JobAction): void {
    this.busy.set(action);
    this.error.set(null);
  }

  private fail(error: unknown, fallback: string): void {
    this.busy.set(null);
    this.error.set(inlineErrorMessage(error, fallback));
  }

  private focus(testId: string): void {
    afterNextRender(
      () =>
        this.host.nativeElement
          .querySelector<HTMLElement>(`[data-testid="${testId}"]`)
          ?.focus(),
      {
        injector: this.injector,
      },
    );
  }
}
