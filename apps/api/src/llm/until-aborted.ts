/**
 * Runs `work` until it settles or `signal` aborts, whichever comes first: on abort the promise
 * rejects at once with `onAbort()` (the work is left to wind down on its own, its outcome ignored).
 */
export function untilAborted<T>(
  signal: AbortSignal,
  work: () => Promise<T>,
  onAbort: () => Error,
): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const listener = () => reject(onAbort());
    signal.addEventListener('abort', listener, { once: true });
    work().then(
      (value) => {
        signal.removeEventListener('abort', listener);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', listener);
        reject(error);
      },
    );
  });
}

/** Token counts summed over the model calls of one turn. */
