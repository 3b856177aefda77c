import { DestroyRef, computed, inject, signal } from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { type Observable, filter } from 'rxjs';
import type { AppEventName } from '@metatronos/shared-types';
import { EventStream } from './event-stream';
import { ServerStatus } from './server-status';

/**
 * Things that wait for the owner (emails Metatron wrote, tool calls to approve), counted for a badge on
 * a navigation entry. A root service extends it with the list's request and the event that announces a
 * change; the page that shows the list passes its fresher copy through `set()`.
 */
export abstract class WaitingItems<T> {
  private readonly events = inject(EventStream);
  private readonly destroyRef = inject(DestroyRef);
  private readonly server = inject(ServerStatus);
  /** Counts the server's returns after an outage: items may have come meanwhile. */
  private readonly recovered$ = toObservable(this.server.recovered);
  private readonly items = signal<readonly T[]>([]);
  private following = false;

  readonly list = this.items.asReadonly();
  readonly count = computed(() => this.items().length);

  /** The event that says the list changed on the server. */
  protected abstract readonly event: AppEventName;
  /** The items waiting now. */
  protected abstract fetch(): Observable<readonly T[]>;

  /** Starts loading (once) and following the event, the stream's (re)opening and the server's return. */
  follow(): void {
    if (this.following) return;
    this.following = true;
    this.events
      .on(this.event)
      .pipe(takeUntilDestroyed(this.destroyRef))
      .subscribe(() => this.load());
    // Events sent while the stream was closed are lost: each (re)opening catches up.
    this.events.stateChanges$
      .pipe(
        filter((state) => state === 'open'),
        takeUntilDestroyed(this.destroyRef),
      )
      .subscribe(() => this.load());
    const seen = this.server.recovered();
    this.recovered$
      .pipe(
        filter((recoveries) => recoveries > seen),
        takeUntilDestroyed(this.destroyRef),
      )
      .subscribe(() => this.load());
    this.load();
  }

  /** A fresher list (the page's own load, or an item settled there). */
  set(items: readonly T[]): void {
    this.items.set(items);
  }

  private load(): void {
    this.fetch().subscribe({
      next: (items) => this.set(items),
      error: () => undefined,
    });
  }
}
