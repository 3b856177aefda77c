import {
  DOCUMENT,
  DestroyRef,
  ElementRef,
  Injectable,
  InjectionToken,
  Renderer2,
  inject,
} from '@angular/core';
import type { CanDeactivateFn } from '@angular/router';

/** What the owner is asked before unsaved edits are left behind. */
export const LEAVE_QUESTION =
  'You have unsaved changes. Leave without saving them?';

/** Asks the owner a yes/no question (`window.confirm`); replaceable in tests. */
export const CONFIRM = new InjectionToken<(question: string) => boolean>(
  'CONFIRM',
  {
    providedIn: 'root',
    factory: () => {
      const view = inject(DOCUMENT).defaultView;
      return (question: string) => view?.confirm(question) ?? true;
    },
  },
);

/** A form with edits that may be unsaved. */
export interface UnsavedForm {
  dirty: () => boolean;
  /** Saves the form (Ctrl/Cmd+S); absent: the shortcut does nothing for it. */
  save?: () => void;
  /** The form's element: Ctrl/Cmd+S saves the form that holds the focus. */
  host?: HTMLElement;
}

/**
 * The forms on screen with edits that may be unsaved: in-app navigation asks before leaving them
 * ({@link unsavedChangesGuard}), and Ctrl/Cmd+S saves the one that has the focus (else the page's form)
 * instead of opening the browser's "save page" dialog.
 */
@Injectable({ providedIn: 'root' })
export class UnsavedChanges {
  private readonly forms: UnsavedForm[] = [];
  private readonly confirm = inject(CONFIRM);
  private readonly document = inject(DOCUMENT);

  constructor() {
    const listener = (event: KeyboardEvent) => this.onKeydown(event);
    this.document.addEventListener('keydown', listener);
    inject(DestroyRef).onDestroy(() =>
      this.document.removeEventListener('keydown', listener),
    );
  }

  /** Tracks a form until the returned function is called. */
  register(form: UnsavedForm): () => void {
    this.forms.push(form);
    return () => {
      const index = this.forms.indexOf(form);
      if (index >= 0) this.forms.splice(index, 1);
    };
  }

  dirty(): boolean {
    return this.forms.some((form) => form.dirty());
  }

  /** True when nothing is unsaved or the owner agrees to drop it. */
  confirmLeave(): boolean {
    return !this.dirty() || this.confirm(LEAVE_QUESTION);
  }

  /** Ctrl/Cmd+S: saves the form holding the focus, else the last shown form with edits. */
  private onKeydown(event: KeyboardEvent): void {
    if (
      !(event.ctrlKey || event.metaKey) ||
      event.altKey ||
      event.key.toLowerCase() !== 's' ||
      this.forms.length === 0
    )
      return;
    event.preventDefault();
    const focused = this.document.activeElement;
    const saving = [...this.forms].reverse();
    const form =
      saving.find(
        (candidate) =>
          candidate.save &&
          candidate.host &&
          focused &&
          candidate.host.contains(focused),
      ) ?? saving.find((candidate) => candidate.save && candidate.dirty());
    if (form?.save && form.dirty()) form.save();
  }
}

/** Route guard: leaving a page with unsaved edits asks first. */
export const unsavedChangesGuard: CanDeactivateFn<unknown> = () =>
  inject(UnsavedChanges).confirmLeave();

/**
 * Guards the calling component's form for as long as it lives: the browser asks before the page is
 * reloaded or closed while `dirty()`, in-app navigation asks too (routes with {@link unsavedChangesGuard}),
 * and Ctrl/Cmd+S calls `save`. Call it in the component's constructor (an injection context).
 */
export function warnBeforeUnload(
  dirty: () => boolean,
  save?: () => void,
): void {
  const host = inject(ElementRef, { optional: true })?.nativeElement as
    | HTMLElement
    | undefined;
  const unregister = inject(UnsavedChanges).register({ dirty, save, host });
  const stop = inject(Renderer2).listen(
    'window',
    'beforeunload',
    (event: BeforeUnloadEvent) => {
      if (dirty()) event.preventDefault();
    },
  );
  inject(DestroyRef).onDestroy(() => {
    stop();
    unregister();
  });
}
