import { DestroyRef, Renderer2, inject } from '@angular/core';

/**
 * Has the browser ask before the page is reloaded or closed while `dirty()` says there are unsaved
 * edits, for as long as the calling component lives. Call it in the component's constructor.
 */
export function warnBeforeUnload(dirty: () => boolean): void {
  const stop = inject(Renderer2).listen(
    'window',
    'beforeunload',
    (event: BeforeUnloadEvent) => {
      if (dirty()) event.preventDefault();
    },
  );
  inject(DestroyRef).onDestroy(stop);
}
