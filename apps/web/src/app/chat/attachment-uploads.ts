import { HttpErrorResponse, HttpEventType } from '@angular/common/http';
import { computed, signal } from '@angular/core';
import type { Subscription } from 'rxjs';
import {
  type AttachmentKind,
  MAX_ATTACHMENTS_PER_MESSAGE,
  type MessageAttachment,
  type UploadedAttachment,
  describeApiError,
} from '@metatronos/shared-types';
import type { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';

/** A file picked for the next message: uploading (with progress), uploaded, or refused. */
export interface PendingAttachment {
  key: number;
  name: string;
  size: number;
  /** 0–100 while uploading. */
  progress: number;
  status: 'uploading' | 'done' | 'error';
  error: string | null;
  uploaded: UploadedAttachment | null;
}

export function attachmentKind(mime: string): AttachmentKind {
  if (mime.startsWith('image/')) return 'image';
  return mime === 'application/pdf' ? 'pdf' : 'text';
}

/** "12 KB", "3.4 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** What to tell the owner when an upload was refused (the server says why; 413 from a proxy may say nothing). */
export function uploadErrorMessage(name: string, error: unknown): string {
  if (error instanceof HttpErrorResponse) {
    if (error.status === 413)
      return describeApiError(error.error, `"${name}" is too large to attach.`);
    if (error.status === 415)
      return describeApiError(
        error.error,
        `"${name}" is not a file type that can be attached.`,
      );
  }
  return inlineErrorMessage(error, `Uploading "${name}" failed.`);
}

/**
 * The composer's attachments: each file uploads as soon as it is picked (progress per file), and
 * the uploaded ones go with the next message as `attachmentIds`.
 */
export class AttachmentUploads {
  private keys = 0;
  private readonly subscriptions = new Map<number, Subscription>();
  readonly items = signal<PendingAttachment[]>([]);
  /** A file refused before uploading (too many files). */
  readonly notice = signal<string | null>(null);

  readonly uploading = computed(() =>
    this.items().some((item) => item.status === 'uploading'),
  );
  readonly ready = computed(() =>
    this.items().flatMap((item) =>
      item.status === 'done' && item.uploaded ? [item.uploaded] : [],
    ),
  );

  constructor(private readonly api: ApiClient) {}

  add(files: Iterable<File>): void {
    this.notice.set(null);
    for (const file of files) {
      if (this.items().length >= MAX_ATTACHMENTS_PER_MESSAGE) {
        this.notice.set(
          `At most ${MAX_ATTACHMENTS_PER_MESSAGE} files go with one message.`,
        );
        break;
      }
      const key = ++this.keys;
      this.items.update((list) => [
        ...list,
        {
          key,
          name: file.name,
          size: file.size,
          progress: 0,
          status: 'uploading',
          error: null,
          uploaded: null,
        },
      ]);
      const subscription = this.api.uploadAttachment(file).subscribe({
        next: (event) => {
          if (event.type === HttpEventType.UploadProgress) {
            const progress = event.total
              ? Math.round((100 * event.loaded) / event.total)
              : 0;
            this.patch(key, { progress });
          } else if (event.type === HttpEventType.Response && event.body) {
            this.patch(key, {
              progress: 100,
              status: 'done',
              uploaded: event.body,
            });
          }
        },
        error: (error: unknown) => {
          this.subscriptions.delete(key);
          this.patch(key, {
            status: 'error',
            error: uploadErrorMessage(file.name, error),
          });
        },
        complete: () => this.subscriptions.delete(key),
      });
      if (!subscription.closed) this.subscriptions.set(key, subscription);
    }
  }

  private patch(key: number, changes: Partial<PendingAttachment>): void {
    this.items.update((list) =>
      list.map((item) => (item.key === key ? { ...item, ...changes } : item)),
    );
  }

  remove(key: number): void {
    this.subscriptions.get(key)?.unsubscribe();
    this.subscriptions.delete(key);
    this.items.update((list) => list.filter((item) => item.key !== key));
    this.notice.set(null);
  }

  /** Takes the list out (the message is being sent); `restore` puts it back if the server refused the message. */
  take(): PendingAttachment[] {
    const taken = this.items();
    this.items.set([]);
    this.notice.set(null);
    return taken;
  }

  restore(items: PendingAttachment[]): void {
    this.items.update((list) => [...items, ...list]);
  }

  clear(): void {
    for (const subscription of this.subscriptions.values())
      subscription.unsubscribe();
    this.subscriptions.clear();
    this.items.set([]);
    this.notice.set(null);
  }
}

/** How a freshly sent message shows its attachments before the server's copy arrives. */
export function asMessageAttachments(
  uploaded: UploadedAttachment[],
): MessageAttachment[] {
  return uploaded.map((file) => ({ ...file, kind: attachmentKind(file.mime) }));
}

/** Files dragged over the page (not text or links). */
export function carriesFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}
