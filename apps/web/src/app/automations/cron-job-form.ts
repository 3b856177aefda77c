import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
  effect,
  inject,
  input,
  output,
  signal,
  untracked,
  viewChild,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatRadioButton, MatRadioGroup } from '@angular/material/radio';
import {
  Subject,
  catchError,
  debounceTime,
  distinctUntilChanged,
  finalize,
  map,
  of,
  switchMap,
} from 'rxjs';
import {
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  DEFAULT_JOB_MAX_ROUNDS,
  DEFAULT_JOB_MAX_TOKENS_PER_RUN,
  JOB_MAX_ROUNDS_MAX,
  JOB_MAX_ROUNDS_MIN,
  JOB_MAX_TOKENS_PER_RUN_MAX,
  JOB_MAX_TOKENS_PER_RUN_MIN,
  MAIL_TRIGGER_DEFAULT_FOLDER,
  MAIL_TRIGGER_FOLDER_MAX_LENGTH,
  MAX_SENDS_PER_UNATTENDED_RUN,
  type CreateCronJobRequest,
  type CronJobView,
  type EmailAccountView,
  type CronPreview,
  type ModeView,
  type UpdateCronJobRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { warnBeforeUnload } from '../core/unsaved-changes';
import { Icon } from '../ui/icon';
import { InvalidInput } from '../ui/invalid-input';
import { LengthCounter } from '../ui/length-counter';
import { formatInZone } from './automation-format';
import { actOnOwnChoices, actOnOwnLabel } from './act-on-own';
import { modeDescription, modeLabel } from '../chat/mode-words';

/** Wait this long after the last keystroke before asking the server what an expression means. */
export const PREVIEW_DEBOUNCE_MS = 300;

export const CRON_PRESETS: readonly { label: string; expression: string }[] = [
  { label: 'Weekdays at 08:00', expression: '0 8 * * 1-5' },
  { label: 'Every day at 07:30', expression: '30 7 * * *' },
  { label: 'Mondays at 09:00', expression: '0 9 * * 1' },
  { label: 'Every hour', expression: '0 * * * *' },
];

/** The preview answer for one expression (`problem` when the preview itself could not be fetched). */
interface PreviewResult {
  expression: string;
  preview: CronPreview | null;
  problem: string | null;
}

/** What starts the job's runs. */
export type JobTrigger = 'schedule' | 'mail';

export interface CronJobSaved {
  job: CronJobView;
  created: boolean;
}

/** Creates a job (no `job` input) or edits one, with a live preview of the schedule as it is typed. */
@Component({
  selector: 'mt-cron-job-form',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatFormField,
    MatHint,
    MatLabel,
    MatInput,
    MatRadioButton,
    MatRadioGroup,
    Icon,
    InvalidInput,
    LengthCounter,
  ],
  templateUrl: './cron-job-form.html',
  styleUrl: './cron-job-form.scss',
})
export class CronJobForm {
  protected readonly modeLabel = modeLabel;
  protected readonly modeDescription = modeDescription;
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  private readonly expression$ = new Subject<string>();
  private readonly nameInput =
    viewChild<ElementRef<HTMLInputElement>>('nameInput');

  /** The job to edit (a snapshot: later list reloads do not reset the form); null to create one. */
  readonly job = input<CronJobView | null>(null);
  readonly saved = output<CronJobSaved>();
  readonly cancelled = output<void>();

  protected readonly nameMax = CRONJOB_NAME_MAX_LENGTH;
  protected readonly instructionMax = CRONJOB_INSTRUCTION_MAX_LENGTH;
  protected readonly expressionMax = CRON_EXPRESSION_MAX_LENGTH;
  protected readonly folderMax = MAIL_TRIGGER_FOLDER_MAX_LENGTH;
  protected readonly presets = CRON_PRESETS;
  protected readonly formatTime = formatInZone;

  protected readonly name = signal('');
  protected readonly instruction = signal('');
  protected readonly expression = signal('');
  protected readonly enabled = signal(true);
  protected readonly trigger = signal<JobTrigger>('schedule');
  /** The email account a mail-triggered job watches. */
  protected readonly accountId = signal('');
  protected readonly folder = signal(MAIL_TRIGGER_DEFAULT_FOLDER);
  /** The email accounts (`GET /api/accounts`), asked for when the mail trigger is first shown; null until then. */
  protected readonly accounts = signal<readonly EmailAccountView[] | null>(
    null,
  );
  protected readonly accountsError = signal<string | null>(null);
  /** The mode each run starts in: the tools its instruction needs. */
  protected readonly mode = signal('default');
  /** The modes to pick from (`GET /api/tools`); empty until loaded, or when loading failed. */
  protected readonly modes = signal<readonly ModeView[]>([]);
  /** The sending and deleting tools this job may use without asking (`actOnOwnTools`). */
  protected readonly actOnOwn = signal<ReadonlySet<string>>(new Set());
  protected readonly actOnOwnChoices = computed(() =>
    actOnOwnChoices(this.modes(), this.mode(), this.actOnOwn()),
  );
  protected readonly actOnOwnLabel = actOnOwnLabel;
  protected readonly maxSends = MAX_SENDS_PER_UNATTENDED_RUN;
  /** The run's limits as typed ("200,000" is fine). */
  protected readonly maxRounds = signal(String(DEFAULT_JOB_MAX_ROUNDS));
  protected readonly maxTokens = signal(String(DEFAULT_JOB_MAX_TOKENS_PER_RUN));
  private readonly roundsValue = computed(() => wholeNumber(this.maxRounds()));
  private readonly tokensValue = computed(() => wholeNumber(this.maxTokens()));
  protected readonly maxRoundsError = computed(() => {
    const value = this.roundsValue();
    return value === null ||
      value < JOB_MAX_ROUNDS_MIN ||
      value > JOB_MAX_ROUNDS_MAX
      ? `A whole number from ${JOB_MAX_ROUNDS_MIN} to ${JOB_MAX_ROUNDS_MAX}.`
      : null;
  });
  protected readonly maxTokensError = computed(() => {
    const value = this.tokensValue();
    return value === null ||
      value < JOB_MAX_TOKENS_PER_RUN_MIN ||
      value > JOB_MAX_TOKENS_PER_RUN_MAX
      ? `A whole number from ${JOB_MAX_TOKENS_PER_RUN_MIN.toLocaleString('en-US')} to ${JOB_MAX_TOKENS_PER_RUN_MAX.toLocaleString('en-US')}.`
      : null;
  });
  protected readonly touched = signal<ReadonlySet<string>>(new Set());
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);

  private readonly previewResult = signal<PreviewResult | null>(null);
  protected readonly previewLoading = signal(false);

  protected readonly editing = computed(() => this.job() !== null);
  protected readonly trimmedExpression = computed(() =>
    this.expression().trim(),
  );
  /** The preview of the expression as typed now; null while it is being asked for. */
  protected readonly preview = computed(() => {
    const result = this.previewResult();
    return result && result.expression === this.trimmedExpression()
      ? result
      : null;
  });
  /** The last answer, shown (dimmed) while the next one is on its way. */
  protected readonly shownPreview = computed(() =>
    this.trimmedExpression() ? this.previewResult() : null,
  );

  protected readonly nameError = computed(() => {
    const name = this.name().trim();
    if (!name) return 'Give the job a name.';
    if (name.length > CRONJOB_NAME_MAX_LENGTH)
      return `At most ${CRONJOB_NAME_MAX_LENGTH} characters.`;
    return null;
  });
  protected readonly instructionError = computed(() => {
    const instruction = this.instruction();
    if (!instruction.trim()) return 'Say what Metatron should do on each run.';
    if (instruction.length > CRONJOB_INSTRUCTION_MAX_LENGTH) {
      return `${instruction.length - CRONJOB_INSTRUCTION_MAX_LENGTH} characters too long.`;
    }
    return null;
  });
  protected readonly accountError = computed(() =>
    this.accountId() ? null : 'Choose the email account to watch.',
  );
  protected readonly folderError = computed(() => {
    const folder = this.folder().trim();
    if (!folder) return 'Name the folder to watch (usually INBOX).';
    if (folder.length > MAIL_TRIGGER_FOLDER_MAX_LENGTH)
      return `At most ${MAIL_TRIGGER_FOLDER_MAX_LENGTH} characters.`;
    return null;
  });
  /** What keeps the chosen trigger from being saved. */
  private readonly triggerError = computed(() =>
    this.trigger() === 'mail'
      ? (this.accountError() ?? this.folderError())
      : this.expressionError(),
  );
  protected readonly expressionError = computed(() => {
    if (!this.trimmedExpression())
      return 'Enter a cron expression or pick a preset.';
    const preview = this.preview()?.preview;
    return preview && !preview.valid
      ? (preview.error ?? 'This expression is not valid.')
      : null;
  });
  protected readonly nameInvalid = computed(
    () => this.touched().has('name') && !!this.nameError(),
  );
  protected readonly instructionInvalid = computed(
    () =>
      (this.touched().has('instruction') && !!this.instructionError()) ||
      this.instruction().length > CRONJOB_INSTRUCTION_MAX_LENGTH,
  );
  /** Red once the server said it is invalid, or when left empty. */
  protected readonly expressionInvalid = computed(
    () =>
      !!this.expressionError() &&
      (this.touched().has('expression') || !!this.preview()?.preview),
  );

  /** The expression is known to be fine, or the preview could not be fetched (the server decides on save). */
  private readonly expressionChecked = computed(() => {
    const result = this.preview();
    return !!result && (result.problem !== null || !!result.preview?.valid);
  });

  protected readonly changes = computed<UpdateCronJobRequest>(() => {
    const job = this.job();
    const request = this.request();
    if (!job) return request;
    const changes: UpdateCronJobRequest = {};
    if (request.name !== job.name.trim()) changes.name = request.name;
    if (request.instruction !== job.instruction.trim())
      changes.instruction = request.instruction;
    if (
      request.cronExpression &&
      request.cronExpression !== job.cronExpression?.trim()
    )
      changes.cronExpression = request.cronExpression;
    if (
      request.mailTrigger &&
      (request.mailTrigger.accountId !== job.mailTrigger?.accountId ||
        request.mailTrigger.folder !== job.mailTrigger?.folder)
    )
      changes.mailTrigger = request.mailTrigger;
    if (request.mode !== (job.mode ?? 'default')) changes.mode = request.mode;
    const actOnOwn = request.actOnOwnTools ?? [];
    if (actOnOwn.join(',') !== [...(job.actOnOwnTools ?? [])].sort().join(','))
      changes.actOnOwnTools = actOnOwn;
    const rounds = this.roundsValue();
    if (rounds !== null && rounds !== job.maxRounds) changes.maxRounds = rounds;
    const tokens = this.tokensValue();
    if (tokens !== null && tokens !== job.maxTokensPerRun)
      changes.maxTokensPerRun = tokens;
    return changes;
  });
  protected readonly dirty = computed(() => {
    const job = this.job();
    if (job) return Object.keys(this.changes()).length > 0;
    return !!(
      this.name().trim() ||
      this.instruction().trim() ||
      this.trimmedExpression() ||
      this.accountId()
    );
  });
  protected readonly canSave = computed(
    () =>
      !this.saving() &&
      this.dirty() &&
      !this.nameError() &&
      !this.instructionError() &&
      !this.triggerError() &&
      !this.maxRoundsError() &&
      !this.maxTokensError() &&
      (this.trigger() === 'mail' || this.expressionChecked()),
  );

  constructor() {
    this.expression$
      .pipe(
        map((expression) => expression.trim()),
        debounceTime(PREVIEW_DEBOUNCE_MS),
        distinctUntilChanged(),
        switchMap((expression) => {
          if (!expression)
            return of<PreviewResult>({
              expression,
              preview: null,
              problem: null,
            });
          this.previewLoading.set(true);
          return this.api.cronPreview(expression).pipe(
            map(
              (preview): PreviewResult => ({
                expression,
                preview,
                problem: null,
              }),
            ),
            catchError((error: unknown) =>
              of<PreviewResult>({
                expression,
                preview: null,
                problem: inlineErrorMessage(
                  error,
                  "Couldn't check the expression.",
                ),
              }),
            ),
            finalize(() => this.previewLoading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe((result) => this.previewResult.set(result));

    // A (new) job to edit, or the blank create form: fill the fields and focus the name.
    effect(() => {
      const job = this.job();
      untracked(() => {
        this.name.set(job?.name ?? '');
        this.instruction.set(job?.instruction ?? '');
        this.enabled.set(job?.enabled ?? true);
        this.mode.set(job?.mode ?? 'default');
        this.actOnOwn.set(new Set(job?.actOnOwnTools ?? []));
        this.maxRounds.set(String(job?.maxRounds ?? DEFAULT_JOB_MAX_ROUNDS));
        this.maxTokens.set(
          String(job?.maxTokensPerRun ?? DEFAULT_JOB_MAX_TOKENS_PER_RUN),
        );
        this.touched.set(new Set());
        this.saveError.set(null);
        this.setExpression(job?.cronExpression ?? '');
        this.trigger.set(job?.mailTrigger ? 'mail' : 'schedule');
        this.accountId.set(job?.mailTrigger?.accountId ?? '');
        this.folder.set(
          job?.mailTrigger?.folder ?? MAIL_TRIGGER_DEFAULT_FOLDER,
        );
        if (job?.mailTrigger) this.loadAccounts();
        afterNextRender(() => this.nameInput()?.nativeElement.focus(), {
          injector: this.injector,
        });
      });
    });

    warnBeforeUnload(this.dirty, () => this.save());

    this.api
      .tools()
      .pipe(
        catchError(() => of(null)),
        takeUntilDestroyed(),
      )
      .subscribe((tools) => this.modes.set(tools?.modes ?? []));
  }

  protected setExpression(value: string): void {
    this.expression.set(value);
    this.expression$.next(value);
    this.clearSaveError();
  }

  protected setTrigger(trigger: JobTrigger): void {
    this.trigger.set(trigger);
    this.clearSaveError();
    if (trigger === 'mail') {
      this.loadAccounts();
      // A mail run reads the new mail first: the email mode has email_actions (the owner may still pick another).
      if (
        this.mode() === 'default' &&
        this.modes().some((m) => m.name === 'email')
      )
        this.mode.set('email');
    }
  }

  /** Asks for the email accounts once; a single one is chosen for the owner. */
  private loadAccounts(): void {
    if (this.accounts() !== null) return;
    this.accounts.set([]);
    this.accountsError.set(null);
    this.api.accounts().subscribe({
      next: (all) => {
        const email = all.filter(
          (a): a is EmailAccountView => a.kind === 'email',
        );
        this.accounts.set(email);
        if (!this.accountId() && email.length === 1)
          this.accountId.set(email[0].id);
      },
      error: (error: unknown) => {
        // Asked again the next time the mail trigger is chosen.
        this.accounts.set(null);
        this.accountsError.set(
          inlineErrorMessage(error, "Couldn't load the email accounts."),
        );
      },
    });
  }

  protected setActOnOwn(tool: string, allowed: boolean): void {
    this.actOnOwn.update((tools) => {
      const next = new Set(tools);
      if (allowed) next.add(tool);
      else next.delete(tool);
      return next;
    });
    this.clearSaveError();
  }

  protected usePreset(expression: string): void {
    this.setExpression(expression);
    this.touch('expression');
  }

  protected touch(field: string): void {
    if (!this.touched().has(field))
      this.touched.update((set) => new Set([...set, field]));
  }

  protected clearSaveError(): void {
    if (this.saveError()) this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    const job = this.job();
    this.saving.set(true);
    this.saveError.set(null);
    const request = job
      ? this.api.updateCronJob(job.id, this.changes())
      : this.api.createCronJob({ ...this.request(), enabled: this.enabled() });
    request.subscribe({
      next: (saved) => {
        this.saving.set(false);
        this.saved.emit({ job: saved, created: !job });
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  /** The fields of a create; exactly one trigger (the one chosen). */
  private request(): Omit<CreateCronJobRequest, 'enabled'> {
    const actOnOwnTools = [...this.actOnOwn()].sort();
    const rounds = this.roundsValue();
    const tokens = this.tokensValue();
    const common = {
      name: this.name().trim(),
      instruction: this.instruction().trim(),
      // Sent only when some tool is allowed: a new job acts on its own with nothing by default.
      ...(actOnOwnTools.length || this.job() ? { actOnOwnTools } : {}),
      // The limits are sent when they differ from the defaults the server applies.
      ...(rounds !== null && rounds !== DEFAULT_JOB_MAX_ROUNDS
        ? { maxRounds: rounds }
        : {}),
      ...(tokens !== null && tokens !== DEFAULT_JOB_MAX_TOKENS_PER_RUN
        ? { maxTokensPerRun: tokens }
        : {}),
    };
    return this.trigger() === 'mail'
      ? {
          ...common,
          mailTrigger: {
            accountId: this.accountId(),
            folder: this.folder().trim(),
          },
          mode: this.mode(),
        }
      : {
          ...common,
          cronExpression: this.trimmedExpression(),
          mode: this.mode(),
        };
  }
}

/** "200,000", "200 000" or "200000" as a number; null for anything else. */
export function wholeNumber(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d{1,3}(?:[,_ ]?\d{3})*$/.test(trimmed)) return null;
  const value = Number(trimmed.replace(/[,_ ]/g, ''));
  return Number.isSafeInteger(value) ? value : null;
}
