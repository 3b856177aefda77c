import { Injectable } from '@angular/core';
import type { AppEventMap } from '@metatronos/shared-types';

type RestoredEvent = AppEventMap['backup.restored'];

/** What the console says after it reloaded for a restore. */
export function restoredNotice(event: RestoredEvent): string {
  const secrets =
    event.secrets === 'restored'
      ? " The backup's API keys and tokens are in use."
      : event.secrets === 'kept'
        ? ' Your own API keys and tokens were kept (the backup held none, or its passphrase was not given).'
        : '';
  return `A backup was restored: the console reloaded with its data.${secrets}`;
}

/** Set just before a reload caused by a restore, so the reloaded console can say why it reloaded. */
const RESTORED_KEY = 'mt-restored-at';

/**
 * Reloads the whole console. Its own service so specs can see a reload happen (jsdom cannot reload), and so
 * the reason survives the reload in session storage.
 */
@Injectable({ providedIn: 'root' })
export class PageReload {
  /** After a restore every page holds data from before it: start again from the server. */
  afterRestore(event: RestoredEvent): void {
    try {
      sessionStorage.setItem(RESTORED_KEY, JSON.stringify(event));
    } catch {
      // Storage refused (private mode): the reload still happens, without the notice.
    }
    this.reload();
  }

  /** The restore the console last reloaded for, read once (null: it did not reload for one). */
  takeRestored(): RestoredEvent | null {
    try {
      const stored = sessionStorage.getItem(RESTORED_KEY);
      sessionStorage.removeItem(RESTORED_KEY);
      if (stored === null) return null;
      const parsed = JSON.parse(stored) as Partial<RestoredEvent> | null;
      return typeof parsed?.at === 'string'
        ? { at: parsed.at, secrets: parsed.secrets }
        : { at: stored };
    } catch {
      return null;
    }
  }

  reload(): void {
    location.reload();
  }
}
