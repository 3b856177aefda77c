import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import { EMPTY, Subject, catchError, filter, mergeMap, tap } from 'rxjs';
import type { CronJobView, CronRunView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { liveResource } from '../core/live-resource';
import { errorStatus } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { CronJobCard } from './cron-job-card';
import { CronJobForm, type CronJobSaved } from './cron-job-form';
import { PulseCard } from './pulse-card';

/** The list with `job` in place of the one with its id, or added at the end (the list is in creation order). */
export function upsertJob(
  jobs: CronJobView[],
  job: CronJobView,
): CronJobView[] {
  return jobs.some((item) => item.id === job.id)
    ? jobs.map((item) => (item.id === job.id ? job : item))
    : [...jobs, job];
}

/** A job as a run of it started or ended says it is now (until the server's view of it arrives). */
export function withRun(job: CronJobView, run: CronRunView): CronJobView {
  if (run.outcome === 'running') return { ...job, running: true };
  return { ...job, running: false, lastRun: run };
}

/** `/automations`: the scheduled jobs Metatron runs on its own, and the Pulse heartbeat. */
@Component({
  selector: 'mt-automations-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatProgressBar,
    Icon,
    ServerError,
    CronJobCard,
    CronJobForm,
    PulseCard,
  ],
  templateUrl: './automations-page.html',
  styleUrl: './automations-page.scss',
})
export class AutomationsPage {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly reloadJob$ = new Subject<string>();

  protected readonly jobs = signal<CronJobView[]>([]);
  protected readonly loaded = signal(false);
  /** The open form: `job` null to create one, or a snapshot of the job being edited. */
  protected readonly form = signal<{ job: CronJobView | null } | null>(null);
  protected readonly empty = computed(
    () => this.loaded() && this.jobs().length === 0,
  );
  /** The create form is open. */
  protected readonly creating = computed(() => {
    const form = this.form();
    return form !== null && form.job === null;
  });

  private readonly live = liveResource({
    load: () => this.api.cronJobs(),
    apply: (jobs) => {
      this.jobs.set(jobs);
      this.loaded.set(true);
    },
    hasValue: this.loaded,
    failure: "Couldn't load the scheduled jobs",
    event: { name: 'cronjobs.changed' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  constructor() {
    this.reloadJob$
      .pipe(
        mergeMap((jobId) =>
          this.api.cronJob(jobId).pipe(
            tap((job) =>
              this.jobs.update((jobs) =>
                jobs.some((item) => item.id === job.id)
                  ? upsertJob(jobs, job)
                  : jobs,
              ),
            ),
            catchError((error: unknown) => {
              if (errorStatus(error) === 404) this.removed(jobId);
              return EMPTY;
            }),
          ),
        ),
        takeUntilDestroyed(),
      )
      .subscribe();

    const events = inject(EventStream);
    events
      .on('automation.run')
      .pipe(
        filter(({ run }) => run.kind === 'cron' && !!run.jobId),
        takeUntilDestroyed(),
      )
      .subscribe(({ run }) => {
        const jobId = run.jobId as string;
        if (!this.jobs().some((job) => job.id === jobId)) return;
        this.jobs.update((jobs) =>
          jobs.map((job) => (job.id === jobId ? withRun(job, run) : job)),
        );
        this.reloadJob$.next(jobId);
      });
  }

  protected newJob(): void {
    this.form.set({ job: null });
  }

  protected editJob(job: CronJobView): void {
    this.form.set({ job });
  }

  protected closeForm(): void {
    this.form.set(null);
  }

  protected saved({ job, created }: CronJobSaved): void {
    this.jobs.update((jobs) => upsertJob(jobs, job));
    this.loaded.set(true);
    this.form.set(null);
    this.snackBar.open(
      created ? `Created “${job.name}”.` : `Saved “${job.name}”.`,
      undefined,
      { duration: 3000 },
    );
  }

  protected changed(job: CronJobView): void {
    this.jobs.update((jobs) => upsertJob(jobs, job));
  }

  protected removed(jobId: string): void {
    this.jobs.update((jobs) => jobs.filter((job) => job.id !== jobId));
    if (this.form()?.job?.id === jobId) this.form.set(null);
  }
}
