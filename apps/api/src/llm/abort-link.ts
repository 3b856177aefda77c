/** A signal that follows others for as long as it is needed, then lets go of them. */
export interface AbortLink {
  readonly signal: AbortSignal;
  /** Stops following the sources and clears the timer (the signal keeps whatever state it has). */
  dispose(): void;
}

/**
 * What `AbortSignal.any([...sources, AbortSignal.timeout(timeoutMs)])` gives (the first source's
 * reason, or a `TimeoutError` DOMException when the time runs out), for a scope with a known end.
 * Those two build weak references, a finalizer and a timer that lives until it fires, on every
 * turn and tool call; this one listener per source and a timer cleared at `dispose()` cost a
 * fraction of that. Nothing may rely on the signal following its sources after `dispose()`.
 */
export function linkAbort(
  sources: readonly AbortSignal[],
  timeoutMs?: number,
): AbortLink {
  const controller = new AbortController();
  const { signal } = controller;
  const already = sources.find((source) => source.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal, dispose: () => undefined };
  }
  let timer: NodeJS.Timeout | null = null;
  const follow = sources.map((source) => {
    const listener = () => stop(source.reason);
    source.addEventListener('abort', listener, { once: true });
    return { source, listener };
  });
  const dispose = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    for (const { source, listener } of follow)
      source.removeEventListener('abort', listener);
    follow.length = 0;
  };
  const stop = (reason: unknown) => {
    dispose();
    controller.abort(reason);
  };
  if (timeoutMs !== undefined) {
    timer = setTimeout(
      () =>
        stop(
          new DOMException(
            'The operation was aborted due to timeout',
            'TimeoutError',
          ),
        ),
      timeoutMs,
    );
    // As AbortSignal.timeout's: a pending limit does not keep the process alive.
    timer.unref();
  }
  return { signal, dispose };
}
