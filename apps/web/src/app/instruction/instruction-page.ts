import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  input,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
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
  type Observable,
  catchError,
  finalize,
  skip,
  switchMap,
  tap,
} from 'rxjs';
import {
  MEMORY_MAX_LENGTH,
  type ChatPromptPreview,
  type CombinedPromptResponse,
  type SystemInstruction,
  type UpdateSystemInstructionRequest,
} from '@metatronos/shared-types';
import { taintText } from '../actions/action-words';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { Icon } from '../ui/icon';
import { lineDiff, type DiffLine } from './line-diff';
import { InvalidInput } from '../ui/invalid-input';
import { LengthCounter } from '../ui/length-counter';
import { ServerError } from '../ui/server-error';

type EditableField = keyof UpdateSystemInstructionRequest;
const FIELDS: readonly EditableField[] = [
  'coreInstruction',
  'memory',
  'memoryEnabled',
  'dbSchema',
];

/** The fields that differ from what the server has: exactly what a PATCH must send. */
export function instructionChanges(
  saved: SystemInstruction,
  draft: Required<UpdateSystemInstructionRequest>,
): UpdateSystemInstructionRequest {
  const changes: UpdateSystemInstructionRequest = {};
  for (const field of FIELDS) {
    if (draft[field] !== saved[field])
      Object.assign(changes, { [field]: draft[field] });
  }
  return changes;
}

/** `/instruction`: the core instruction, the AI's memory and schema notes, the tools toggle, and the resulting prompt. */
@Component({
  selector: 'mt-instruction-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatLabel,
    MatHint,
    MatInput,
    MatProgressBar,
    MatSlideToggle,
    Icon,
    ServerError,
    InvalidInput,
    LengthCounter,
    RouterLink,
  ],
  templateUrl: './instruction-page.html',
  styleUrl: './instruction-page.scss',
})
export class InstructionPage {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);
  private readonly reloadPrompt$ = new Subject<void>();

  /** `?chat=<id>`: preview that chat's next prompt (its mode and the mark of its newest reply) instead of a new chat's. */
  readonly chat = input<string | undefined>();
  protected readonly promptFor = signal<ChatPromptPreview | null>(null);
  protected readonly promptTaint = computed(() => {
    const marks = this.promptFor()?.taint;
    return marks?.length ? taintText(marks) : null;
  });

  protected readonly memoryMax = MEMORY_MAX_LENGTH;
  protected readonly saved = signal<SystemInstruction | null>(null);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);
  /** Somebody else (the AI, another tab) changed the instruction while there were unsaved edits here. */
  protected readonly changedElsewhere = signal<'ai' | 'owner' | null>(null);

  protected readonly coreInstruction = signal('');
  protected readonly memory = signal('');
  protected readonly memoryEnabled = signal(true);
  protected readonly dbSchema = signal('');

  protected readonly prompt = signal<string | null>(null);
  protected readonly promptLoaded = signal(false);
  protected readonly promptLoading = signal(false);
  protected readonly promptError = signal<string | null>(null);

  /** "Reset to default": the default text once fetched, and the diff from what the editor holds now. */
  protected readonly defaultCore = signal<string | null>(null);
  protected readonly resetLoading = signal(false);
  protected readonly resetError = signal<string | null>(null);
  protected readonly resetDiff = computed((): DiffLine[] | null => {
    const target = this.defaultCore();
    return target === null ? null : lineDiff(this.coreInstruction(), target);
  });
  protected readonly resetChangesNothing = computed(
    () => this.resetDiff()?.every((line) => line.kind === 'same') ?? false,
  );

  protected readonly changes = computed(() => {
    const saved = this.saved();
    if (!saved) return {};
    return instructionChanges(saved, {
      coreInstruction: this.coreInstruction(),
      memory: this.memory(),
      memoryEnabled: this.memoryEnabled(),
      dbSchema: this.dbSchema(),
    });
  });
  protected readonly dirty = computed(
    () => Object.keys(this.changes()).length > 0,
  );
  protected readonly memoryLength = computed(() => this.memory().length);
  protected readonly memoryTooLong = computed(
    () => this.memoryLength() > MEMORY_MAX_LENGTH,
  );
  protected readonly canSave = computed(
    () => this.dirty() && !this.memoryTooLong() && !this.saving(),
  );

  /** Follows changes by the AI or another tab: the form only while it has no edits, the preview always. */
  private readonly live = liveResource({
    load: () => this.api.systemInstruction(),
    apply: (instruction) => {
      this.apply(instruction);
      this.changedElsewhere.set(null);
    },
    hasValue: () => !!this.saved(),
    failure: "Couldn't load the system instruction",
    event: {
      name: 'system-instruction.updated',
      // Our own save: form and preview are up to date already.
      isOwn: (event) => event.updatedAt === this.saved()?.updatedAt,
      seen: (event) => {
        this.refreshPrompt();
        if (this.dirty()) this.changedElsewhere.set(event.by);
      },
    },
    dirty: this.dirty,
    save: () => this.save(),
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  constructor() {
    this.reloadPrompt$
      .pipe(
        switchMap(() => {
          this.promptLoading.set(true);
          const chatId = this.chat();
          const request: Observable<
            CombinedPromptResponse | ChatPromptPreview
          > = chatId ? this.api.chatPrompt(chatId) : this.api.combinedPrompt();
          return request.pipe(
            tap((answer) => {
              const { prompt } = answer;
              this.promptFor.set('chatId' in answer ? answer : null);
              this.prompt.set(prompt);
              this.promptLoaded.set(true);
              this.promptError.set(null);
            }),
            catchError((error: unknown) => {
              this.promptError.set(
                inlineErrorMessage(error, "Couldn't load the prompt preview."),
              );
              return EMPTY;
            }),
            finalize(() => this.promptLoading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    toObservable(inject(ServerStatus).recovered)
      .pipe(skip(1), takeUntilDestroyed())
      .subscribe(() => this.refreshPrompt());

    // Its first value (the bound query parameter, once inputs are set) loads the first preview.
    toObservable(this.chat)
      .pipe(takeUntilDestroyed())
      .subscribe(() => this.refreshPrompt());
  }

  protected refreshPrompt(): void {
    this.reloadPrompt$.next();
  }

  protected previewReset(): void {
    this.resetLoading.set(true);
    this.resetError.set(null);
    this.api
      .defaultInstruction()
      .pipe(finalize(() => this.resetLoading.set(false)))
      .subscribe({
        next: ({ coreInstruction }) => this.defaultCore.set(coreInstruction),
        error: (error: unknown) =>
          this.resetError.set(
            inlineErrorMessage(error, "Couldn't load the default instruction."),
          ),
      });
  }

  /** Puts the default into the editor only: Save writes it, Discard brings the old text back. */
  protected confirmReset(): void {
    const target = this.defaultCore();
    if (target === null) return;
    this.coreInstruction.set(target);
    this.defaultCore.set(null);
  }

  protected cancelReset(): void {
    this.defaultCore.set(null);
    this.resetError.set(null);
  }

  protected discard(): void {
    const saved = this.saved();
    if (saved) this.apply(saved);
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    const changes = this.changes();
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSystemInstruction(changes).subscribe({
      next: (instruction) => {
        this.saving.set(false);
        this.changedElsewhere.set(null);
        this.apply(instruction);
        this.refreshPrompt();
        this.snackBar.open('System instruction saved.', undefined, {
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

  private apply(instruction: SystemInstruction): void {
    this.saved.set(instruction);
    this.coreInstruction.set(instruction.coreInstruction);
    this.memory.set(instruction.memory);
    this.memoryEnabled.set(instruction.memoryEnabled);
    this.dbSchema.set(instruction.dbSchema);
  }
}
