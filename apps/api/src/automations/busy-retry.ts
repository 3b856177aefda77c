/** FerretDB's SQLite backend answers a write that meets another one with "database is locked (SQLITE_BUSY)". */
const BUSY = /SQLITE_BUSY|database is locked/i;
const DELAYS_MS = [25, 100, 400];

/**
 * Runs `work`, retrying it a few times (25, 100, 400 ms apart) while the
 * embedded database reports it busy; any other error, or a fourth busy answer,
 * is thrown. Used where a burst of automations writes at once.
 */
export async function retryWhileBusy<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (
        attempt >= DELAYS_MS.length ||
        !BUSY.test((error as Error)?.message ?? '')
      )
        throw error;
      await new Promise((resolve) => setTimeout(resolve, DELAYS_MS[attempt]));
    }
  }
}
