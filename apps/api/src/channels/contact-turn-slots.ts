import { setMaxListeners } from 'node:events';

/**
 * How many contacts' turns run at once, over all contacts of one channel. Each contact's
 * queue stays serial; different contacts share these slots, first come first served, so a
 * burst from hundreds of contacts (a reconnect after a day) does not start hundreds of
 * model calls and database writes at the same moment.
 */
export class ContactTurnSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: () => number) {}

  /** Turns running now (tests, the bench). */
  get inUse(): number {
    return this.running;
  }

  /**
   * Resolves with the slot's release once one is free. An aborted `signal` resolves
   * at once with a release that frees nothing: the caller checks why and gives up.
   */
  async acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return () => undefined;
    if (this.running >= Math.max(1, this.limit())) {
      const granted = await new Promise<boolean>((resolve) => {
        const grant = () => {
          signal.removeEventListener('abort', abort);
          resolve(true);
        };
        const abort = () => {
          const at = this.waiting.indexOf(grant);
          if (at >= 0) this.waiting.splice(at, 1);
          resolve(false);
        };
        this.waiting.push(grant);
        signal.addEventListener('abort', abort, { once: true });
      });
      // A granted slot was handed over by its releaser, already counted.
      if (!granted) return () => undefined;
    } else this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `running` stays the same.
      if (next) next();
      else this.running--;
    };
  }
}

/**
 * The stop signal of a channel's auto-replies: every contact waiting for a slot or pausing between
 * replies listens to it (one listener each, removed when the wait ends), so a burst from many contacts
 * holds many at once. Node warns of a possible leak past 10 listeners on one signal; here that many
 * is the design, so the limit is off.
 */
export function contactsStopController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(Infinity, controller.signal);
  return controller;
}
