import { HttpErrorResponse } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  effect,
  inject,
  input,
  signal,
  untracked,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatProgressBar } from '@angular/material/progress-bar';
import { Router, RouterLink } from '@angular/router';
import type {
  FileEntry,
  FileListing,
  TodoLists,
} from '@metatronos/shared-types';
import { EMPTY, Subject, catchError, finalize, switchMap, tap } from 'rxjs';
import {
  type ServerProblem,
  errorStatus,
  inlineErrorMessage,
  pageProblem,
} from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { DeleteFileDialog } from './delete-file-dialog';
import { FilesApi, breadcrumbs, downloadUrl, formatSize } from './files-api';

interface Viewer {
  entry: FileEntry;
  loading: boolean;
  text: string | null;
  error: string | null;
}

/** A text request's error body is the JSON as text: parsed, so the server's message can be shown. */
function withJsonBody(error: unknown): unknown {
  if (!(error instanceof HttpErrorResponse) || typeof error.error !== 'string')
    return error;
  try {
    return new HttpErrorResponse({
      error: JSON.parse(error.error) as unknown,
      status: error.status,
      statusText: error.statusText,
      url: error.url ?? undefined,
    });
  } catch {
    return error;
  }
}

/** Explanations for the two dirs, shown at the top level. */
const DIR_HELP: Record<string, string> = {
  file_cache_dir: 'Downloads and scratch files; old files are pruned.',
  file_state_dir: 'Files Metatron keeps: the TODO list, notes.',
};

/**
 * `/files?path=…`: the toolbelt's two dirs (file_cache_dir, file_state_dir) to browse, view, download
 * and delete, and the TODO list Metatron keeps in the state dir.
 */
@Component({
  selector: 'mt-files-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatProgressBar,
    RouterLink,
    Icon,
    ServerError,
  ],
  templateUrl: './files-page.html',
  styleUrl: './files-page.scss',
})
export class FilesPage {
  private readonly api = inject(FilesApi);
  private readonly dialog = inject(MatDialog);
  private readonly router = inject(Router);
  private readonly reload$ = new Subject<string>();

  /** Query parameter: the open directory (`''`/absent: the two dirs). */
  readonly path = input<string>();

  protected readonly listing = signal<FileListing | null>(null);
  protected readonly loading = signal(false);
  protected readonly problem = signal<ServerProblem | null>(null);
  protected readonly missing = signal<string | null>(null);
  protected readonly actionError = signal<string | null>(null);
  protected readonly viewer = signal<Viewer | null>(null);
  protected readonly todo = signal<TodoLists | null>(null);
  protected readonly todoError = signal<string | null>(null);

  protected readonly crumbs = computed(() => breadcrumbs(this.path() ?? ''));
  protected readonly downloadUrl = downloadUrl;

  constructor() {
    this.reload$
      .pipe(
        switchMap((path) => {
          this.loading.set(true);
          return this.api.list(path).pipe(
            tap((listing) => {
              this.listing.set(listing);
              this.problem.set(null);
              this.missing.set(null);
            }),
            catchError((error: unknown) => {
              this.listing.set(null);
              const status = errorStatus(error);
              if (status === 404 || status === 400)
                this.missing.set(
                  inlineErrorMessage(error, 'This folder does not exist.'),
                );
              else
                this.problem.set(pageProblem(error, "Couldn't load the files"));
              return EMPTY;
            }),
            finalize(() => this.loading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    effect(() => {
      const path = this.path() ?? '';
      untracked(() => {
        this.viewer.set(null);
        this.actionError.set(null);
        this.reload$.next(path);
      });
    });
    this.loadTodo();
  }

  /** The line under a name: what a top-level dir is for, or a file's size and date. */
  protected metaOf(entry: FileEntry, listed: string): string {
    if (listed === '') return DIR_HELP[entry.name] ?? '';
    const date = new Date(entry.modifiedAt).toLocaleString();
    return entry.kind === 'file' ? `${formatSize(entry.size)} · ${date}` : date;
  }

  protected refresh(): void {
    this.reload$.next(this.path() ?? '');
    this.loadTodo();
  }

  protected open(entry: FileEntry): void {
    if (entry.kind === 'dir') {
      void this.router.navigate(['/files'], {
        queryParams: { path: entry.path },
      });
      return;
    }
    this.viewer.set({ entry, loading: true, text: null, error: null });
    this.api.text(entry.path).subscribe({
      next: (text) =>
        this.viewer.update((v) =>
          v?.entry === entry ? { ...v, loading: false, text } : v,
        ),
      error: (error: unknown) =>
        this.viewer.update((v) =>
          v?.entry === entry
            ? {
                ...v,
                loading: false,
                error: inlineErrorMessage(
                  withJsonBody(error),
                  "Couldn't open the file.",
                ),
              }
            : v,
        ),
    });
  }

  protected closeViewer(): void {
    this.viewer.set(null);
  }

  protected confirmDelete(entry: FileEntry): void {
    this.dialog
      .open(DeleteFileDialog, {
        data: entry,
        width: '440px',
        maxWidth: '95vw',
        ariaLabelledBy: 'delete-file-title',
      })
      .afterClosed()
      .subscribe((confirmed) => {
        if (confirmed === true) this.remove(entry);
      });
  }

  private remove(entry: FileEntry): void {
    this.actionError.set(null);
    this.api.remove(entry.path).subscribe({
      next: () => {
        if (this.viewer()?.entry.path === entry.path) this.viewer.set(null);
        this.refresh();
      },
      error: (error: unknown) =>
        this.actionError.set(
          inlineErrorMessage(error, `Couldn't delete ${entry.name}.`),
        ),
    });
  }

  private loadTodo(): void {
    this.api.todo().subscribe({
      next: (todo) => {
        this.todo.set(todo);
        this.todoError.set(null);
      },
      error: (error: unknown) =>
        this.todoError.set(
          inlineErrorMessage(error, "Couldn't load the TODO list."),
        ),
    });
  }
}
