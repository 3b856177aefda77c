import { Injectable } from '@angular/core';

/** Set just before a reload caused by a restore, so the reloaded console can say why it reloaded. */
const RESTORED_KEY = 'mt-restored-at';

/**
 * Reloads the whole console. Its own service so specs can see a reload happen (jsdom cannot reload), and so
 * the reason survives the reload in session storage.
 */
@Injectable({ providedIn: 'root' })
export class PageReload {
  /** After a restore every page holds data from before it: start again from the server. */
  afterRestore(at: string): void {
    try {
      sessionStorage.setItem(RESTORED_KEY, at);
    } catch {
      // Storage refused (private mode): the reload still happens, without the notice.
    }
    this.reload();
  }

  /** When the console last reloaded because of a restore, read once. */
  takeRestoredAt(): string | null {
    try {
      const at = sessionStorage.getItem(RESTORED_KEY);
      sessionStorage.removeItem(RESTORED_KEY);
      return at;
    } catch {
      return null;
    }
  }

  reload(): void {
    location.reload();
  }
}
