import { NgTemplateOutlet } from '@angular/common';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatFormField, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import { RouterLink } from '@angular/router';
import type { Observable } from 'rxjs';
import {
  MEMORY_NOTE_MAX_LENGTH,
  MEMORY_QUERY_MAX_LENGTH,
  type MemoryNoteView,
  type MemoryRunChange,
  type MemoryRunView,
  type MemorySearchResult,
  type MemoryVersion,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';

const DAY_MS = 86_400_000;

/** One change to a note in the last day, for "Last night's changes". */
export interface RecentChange {
  noteId: string;
  text: string;
  reason: string;
  by: MemoryVersion['by'];
  at: string;
}

/** What changed in the 24 hours before `now`: notes written, and each kept prior version with its reason. */
export function recentChanges(
  notes: readonly MemoryNoteView[],
  now: number,
): RecentChange[] {
  const since = now - DAY_MS;
  const out: RecentChange[] = [];
  for (const note of notes) {
    if (Date.parse(note.createdAt) >= since)
      out.push({
        noteId: note.id,
        text: note.text,
        reason: note.status === 'proposed' ? 'proposed' : 'new note',
        by: 'ai',
        at: note.createdAt,
      });
    for (const version of note.history)
      if (Date.parse(version.at) >= since)
        out.push({
          noteId: note.id,
          text: version.text,
          reason: version.reason,
          by: version.by,
          at: version.at,
        });
  }
  return out.sort((a, b) => b.at.localeCompare(a.at));
}

const SOURCE_LABELS: Record<string, string> = {
  owner: 'you',
  contact: 'a contact',
  email: 'an email',
  web: 'a web page',
  tool: 'a tool',
  assistant: 'Metatron',
  cron: 'a job',
  pulse: 'Pulse',
};

const ACTION_LABELS: Record<MemoryRunChange['action'], string> = {
  merged: 'Merged',
  expired: 'Dropped (expired)',
  superseded: 'Superseded',
  proposed: 'Proposed',
};

/** `/memory`: the notes Metatron keeps, where each came from, search over notes and chats, edit, approve and forget. */
@Component({
  selector: 'mt-memory-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatFormField,
    MatLabel,
    MatInput,
    MatProgressBar,
    NgTemplateOutlet,
    RouterLink,
    Icon,
    ServerError,
  ],
  templateUrl: './memory-page.html',
  styleUrl: './memory-page.scss',
})
export class MemoryPage {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly queryMax = MEMORY_QUERY_MAX_LENGTH;
  protected readonly noteMax = MEMORY_NOTE_MAX_LENGTH;
  protected readonly notes = signal<MemoryNoteView[] | null>(null);
  protected readonly results = signal<MemorySearchResult[] | null>(null);
  /** The latest nightly consolidation run, when there was one. */
  protected readonly lastRun = signal<MemoryRunView | null>(null);
  protected readonly query = signal('');
  /** The search the results answer (the box may have changed since). */
  protected readonly searched = signal<string | null>(null);
  protected readonly searchError = signal<string | null>(null);
  protected readonly editing = signal<string | null>(null);
  protected readonly draft = signal('');
  protected readonly busy = signal<string | null>(null);
  protected readonly actionError = signal<string | null>(null);
  protected readonly consolidating = signal(false);

  protected readonly proposals = computed(() =>
    (this.notes() ?? []).filter((n) => n.status === 'proposed'),
  );
  protected readonly kept = computed(() =>
    (this.notes() ?? []).filter((n) => n.status !== 'proposed'),
  );
  protected readonly changes = computed(() =>
    recentChanges(this.notes() ?? [], Date.now()),
  );

  private readonly resource = liveResource({
    load: () => this.api.memories(this.searched() ?? undefined),
    apply: (list) => {
      this.notes.set(list.notes);
      this.lastRun.set(list.lastRun ?? null);
      if (this.searched() !== null) this.results.set(list.results ?? []);
    },
    hasValue: () => this.notes() !== null,
    failure: 'Could not load the memory notes',
    event: { name: 'memories.changed' },
  });
  protected readonly loading = this.resource.loading;
  protected readonly loadProblem = this.resource.problem;

  protected reload(): void {
    this.resource.reload();
  }

  protected search(): void {
    const q = this.query().trim();
    this.searchError.set(null);
    if (!q) {
      this.searched.set(null);
      this.results.set(null);
      return;
    }
    if (q.length > MEMORY_QUERY_MAX_LENGTH) {
      this.searchError.set(
        `Search for at most ${MEMORY_QUERY_MAX_LENGTH} characters.`,
      );
      return;
    }
    this.api.memories(q).subscribe({
      next: (list) => {
        this.searched.set(q);
        this.notes.set(list.notes);
        this.results.set(list.results ?? []);
      },
      error: (error: unknown) =>
        this.searchError.set(inlineErrorMessage(error, 'The search failed.')),
    });
  }

  protected sourceLabel(source: string): string {
    return SOURCE_LABELS[source] ?? source;
  }

  protected startEdit(note: MemoryNoteView): void {
    this.editing.set(note.id);
    this.draft.set(note.text);
    this.actionError.set(null);
  }

  protected cancelEdit(): void {
    this.editing.set(null);
  }

  protected saveEdit(note: MemoryNoteView): void {
    const text = this.draft().trim();
    if (!text || text.length > MEMORY_NOTE_MAX_LENGTH) {
      this.actionError.set(
        `A note needs 1 to ${MEMORY_NOTE_MAX_LENGTH} characters.`,
      );
      return;
    }
    this.run(note.id, this.api.updateMemory(note.id, { text }), 'Saved');
  }

  protected approve(note: MemoryNoteView): void {
    this.run(note.id, this.api.approveMemory(note.id), 'Approved');
  }

  protected discard(note: MemoryNoteView): void {
    this.run(note.id, this.api.discardMemory(note.id), 'Discarded');
  }

  /** Runs the consolidation now; the page shows the run when it ends. */
  protected consolidate(): void {
    this.consolidating.set(true);
    this.actionError.set(null);
    this.api.consolidateMemories().subscribe({
      next: (run) => {
        this.consolidating.set(false);
        this.lastRun.set(run);
        this.snackBar.open(
          `Consolidation done: ${run.changes.length} change(s)`,
          undefined,
          { duration: 2500 },
        );
        this.reload();
      },
      error: (error: unknown) => {
        this.consolidating.set(false);
        this.actionError.set(
          inlineErrorMessage(error, 'The consolidation did not run.'),
        );
      },
    });
  }

  protected actionLabel(change: MemoryRunChange): string {
    return ACTION_LABELS[change.action];
  }

  protected modelLine(run: MemoryRunView): string {
    if (run.modelOutcome === 'done') return 'The model was asked.';
    if (run.modelOutcome === 'failed')
      return `The model's part failed, nothing of it was applied: ${run.error ?? 'no reason given'}`;
    return run.modelReason ?? 'The model was not asked.';
  }

  protected forget(note: MemoryNoteView): void {
    this.run(note.id, this.api.deleteMemory(note.id), 'Forgotten');
  }

  private run(id: string, request: Observable<unknown>, done: string): void {
    this.busy.set(id);
    this.actionError.set(null);
    request.subscribe({
      next: () => {
        this.busy.set(null);
        this.editing.set(null);
        this.snackBar.open(done, undefined, { duration: 2500 });
        this.reload();
      },
      error: (error: unknown) => {
        this.busy.set(null);
        this.actionError.set(
          inlineErrorMessage(error, 'The change was not saved.'),
        );
      },
    });
  }
}
