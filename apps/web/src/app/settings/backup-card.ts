import {
  HttpClient,
  HttpEventType,
  HttpHeaders,
  HttpParams,
} from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  type ElementRef,
  computed,
  inject,
  signal,
  viewChild,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatFormField, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatProgressBar } from '@angular/material/progress-bar';
import type { Subscription } from 'rxjs';
import type { RestoreResult } from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { PageReload } from '../core/page-reload';

export const BACKUP_URL = `${API_BASE}/backup`;
export const RESTORE_URL = `${API_BASE}/backup/restore`;

/** `1536` → `1.5 KB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

type RestoreState =
  | { step: 'idle' }
  | { step: 'confirm'; file: File }
  | { step: 'uploading'; file: File; percent: number }
  | { step: 'restoring'; file: File }
  | { step: 'done'; result: RestoreResult }
  | { step: 'failed'; message: string };

/** Settings → Backup and restore: download one archive of everything, or restore one (after a confirmation). */
@Component({
  selector: 'mt-backup-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatInput,
    MatLabel,
    MatProgressBar,
    Icon,
  ],
  templateUrl: './backup-card.html',
  styleUrl: './backup-card.scss',
})
export class BackupCard {
  private readonly pageReload = inject(PageReload);
  private readonly http = inject(HttpClient);
  private upload: Subscription | null = null;
  private readonly fileInput =
    viewChild.required<ElementRef<HTMLInputElement>>('fileInput');

  protected readonly backupUrl = BACKUP_URL;
  protected readonly state = signal<RestoreState>({ step: 'idle' });
  /** Seals the secrets into the backup; empty: they are left out. */
  protected readonly passphrase = signal('');
  protected readonly restorePassphraseValue = signal('');
  protected readonly downloadFailure = signal<string | null>(null);
  protected readonly formatBytes = formatBytes;
  protected readonly confirming = computed(() => {
    const s = this.state();
    return s.step === 'confirm' ? s.file : null;
  });
  protected readonly uploadPercent = computed(() => {
    const s = this.state();
    return s.step === 'uploading' ? s.percent : null;
  });
  protected readonly busy = computed(() =>
    ['uploading', 'restoring'].includes(this.state().step),
  );
  protected readonly result = computed(() => {
    const s = this.state();
    return s.step === 'done' ? s.result : null;
  });
  protected readonly failure = computed(() => {
    const s = this.state();
    return s.step === 'failed' ? s.message : null;
  });

  constructor() {
    inject(DestroyRef).onDestroy(() => this.upload?.unsubscribe());
  }

  /**
   * Without a passphrase the link downloads as it is. With one, the passphrase goes
   * in a POST body (never in a URL), and the answer is saved as a file.
   */
  protected download(event: Event): void {
    this.downloadFailure.set(null);
    const passphrase = this.passphrase();
    if (!passphrase) return;
    event.preventDefault();
    this.http
      .post(
        BACKUP_URL,
        { passphrase },
        { responseType: 'blob', observe: 'response' },
      )
      .subscribe({
        next: (res) => {
          const name =
            /filename="([^"]+)"/.exec(
              res.headers.get('Content-Disposition') ?? '',
            )?.[1] ?? 'metatronos-backup.tar.gz';
          const url = URL.createObjectURL(res.body as Blob);
          const link = document.createElement('a');
          link.href = url;
          link.download = name;
          link.click();
          setTimeout(() => URL.revokeObjectURL(url), 60_000);
        },
        error: (error: unknown) =>
          this.downloadFailure.set(
            inlineErrorMessage(error, 'The backup failed.'),
          ),
      });
  }

  protected secretsMessage(result: RestoreResult): string {
    return result.secrets === 'kept'
      ? 'The backup held no secrets (or no passphrase was given): the API keys and tokens of this MetatronOS were kept.'
      : 'The API keys and tokens of the backup were restored.';
  }

  protected chooseFile(): void {
    const input = this.fileInput().nativeElement;
    input.value = '';
    input.click();
  }

  protected fileChosen(event: Event): void {
    const input = event.target as HTMLInputElement;
    const file = input.files?.[0];
    // Cleared, so choosing the same file again (after Cancel) is a change too.
    input.value = '';
    if (file) this.state.set({ step: 'confirm', file });
  }

  protected cancel(): void {
    this.state.set({ step: 'idle' });
  }

  protected restore(file: File): void {
    this.state.set({ step: 'uploading', file, percent: 0 });
    this.upload = this.http
      .post<RestoreResult>(RESTORE_URL, file, {
        // The confirmation said everything here is replaced.
        params: new HttpParams().set('replace', 'true'),
        headers: new HttpHeaders({
          'Content-Type': 'application/gzip',
          // A header, not the URL: a passphrase has no place in a log line.
          ...(this.restorePassphraseValue()
            ? { 'X-Backup-Passphrase': this.restorePassphraseValue() }
            : {}),
        }),
        reportProgress: true,
        observe: 'events',
      })
      .subscribe({
        next: (event) => {
          if (event.type === HttpEventType.UploadProgress) {
            const percent = event.total
              ? Math.round((event.loaded / event.total) * 100)
              : 0;
            this.state.set(
              percent >= 100
                ? { step: 'restoring', file }
                : { step: 'uploading', file, percent },
            );
          } else if (event.type === HttpEventType.Response && event.body) {
            this.state.set({ step: 'done', result: event.body });
          }
        },
        error: (error: unknown) =>
          this.state.set({
            step: 'failed',
            message: inlineErrorMessage(error, 'The restore failed.'),
          }),
      });
  }

  protected reloadConsole(): void {
    this.pageReload.reload();
  }
}
