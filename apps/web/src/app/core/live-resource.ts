import { type Signal, inject, signal } from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import {
  EMPTY,
  type Observable,
  Subject,
  catchError,
  filter,
  finalize,
  skip,
  switchMap,
  tap,
} from 'rxjs';
import type { AppEventMap, AppEventName } from '@metatronos/shared-types';
import { EventStream } from './event-stream';
import { type ServerProblem, pageProblem } from './server-problem';
import { ServerStatus } from './server-status';
import { warnBeforeUnload } from './unsaved-changes';

/** An app event that says the resource changed on the server. */
export interface LiveResourceEvent<K extends AppEventName = AppEventName> {
  name: K;
  /** Our own change (e.g. the answer to our save was applied already): ignored. */
  isOwn?(payload: AppEventMap[K]): boolean;
  /** Whether the event changes this resource at all (default: every event does); false: ignored. */
  affects?(payload: AppEventMap[K]): boolean;
  /** Called for every event that is not our own, before the reload (which is skipped while dirty). */
  seen?(payload: AppEventMap[K]): void;
}

export interface LiveResourceOptions<T> {
  /** The request; a reload cancels the one still running. */
  load: () => Observable<T>;
  /** Takes a loaded value. */
  apply: (value: T) => void;
  /** Whether a value is loaded: a failed reload then keeps it, without a page problem. */
  hasValue: () => boolean;
  /** The page problem's title when nothing could be loaded. */
  failure: string;
  /** Reload when this event arrives. */
  event?: { [K in AppEventName]: LiveResourceEvent<K> }[AppEventName];
  /** Unsaved edits: while true, events and server recoveries do not reload, and leaving the page asks first. */
  dirty?: () => boolean;
  /** Saves the edits (Ctrl/Cmd+S). */
  save?: () => void;
}

export interface LiveResource {
  readonly loading: Signal<boolean>;
  /** Why nothing could be loaded; null once a load succeeds. */
  readonly problem: Signal<ServerProblem | null>;
  reload: () => void;
}

/**
 * Loads a resource now, again on `reload()`, on `event`, each time the event stream opens (events sent
 * while it was closed are lost) and when the server is back after an outage (unless `dirty()`). Call it in an injection context, e.g. a component's field initializer placed after
 * everything `apply` touches, since the first load starts right away.
 */
export function liveResource<T>(options: LiveResourceOptions<T>): LiveResource {
  const {
    load,
    apply,
    hasValue,
    failure,
    event,
    dirty = () => false,
  } = options;
  const loading = signal(false);
  const problem = signal<ServerProblem | null>(null);
  const reload$ = new Subject<void>();
  const reload = () => reload$.next();

  reload$
    .pipe(
      switchMap(() => {
        loading.set(true);
        return load().pipe(
          tap((value) => {
            apply(value);
            problem.set(null);
          }),
          catchError((error: unknown) => {
            if (!hasValue()) problem.set(pageProblem(error, failure));
            return EMPTY;
          }),
          finalize(() => loading.set(false)),
        );
      }),
      takeUntilDestroyed(),
    )
    .subscribe();

  if (event) {
    const follow = <K extends AppEventName>({
      name,
      isOwn,
      affects,
      seen,
    }: LiveResourceEvent<K>) =>
      inject(EventStream)
        .on(name)
        .pipe(takeUntilDestroyed())
        .subscribe((payload) => {
          if (isOwn?.(payload) || affects?.(payload) === false) return;
          seen?.(payload);
          if (!dirty()) reload();
        });
    follow(event);
    // Events sent while the stream was not open (before it first opened, or during a drop) never arrive:
    // each time it opens, one reload catches up on what they said.
    inject(EventStream)
      .stateChanges$.pipe(
        filter((state) => state === 'open'),
        takeUntilDestroyed(),
      )
      .subscribe(() => {
        if (!dirty()) reload();
      });
  }

  toObservable(inject(ServerStatus).recovered)
    .pipe(skip(1), takeUntilDestroyed())
    .subscribe(() => {
      if (!dirty()) reload();
    });

  reload();
  if (options.dirty) warnBeforeUnload(options.dirty, options.save);

  return {
    loading: loading.asReadonly(),
    problem: problem.asReadonly(),
    reload,
  };
}
