import {
  LlmProviderError,
  forwardingSink,
  type LlmAdapter,
  type LlmTurnRequest,
  type LlmTurnResult,
  type LlmTurnSink,
} from './llm-adapter';

/**
 * Ends a turn whose provider goes silent: an adapter wrapped by this fails with
 * a readable `LlmProviderError('stalled')` when no chunk arrived from the
 * provider for `stallMs` (text, a tool call's fragment or any other chunk, as the
 * adapter reports them through `onText`/`onActivity`). The time a tool runs is
 * not counted: tools have their own timeout. The silent request is aborted.
 * `stallMs` 0 turns the guard off.
 */
export function guardStalls(
  adapter: LlmAdapter,
  stallMs: number,
  providerName: string,
): LlmAdapter {
  if (stallMs <= 0) return adapter;
  return {
    streamTurn: (request, sink) =>
      streamWatched(adapter, request, sink, stallMs, providerName),
  };
}

async function streamWatched(
  adapter: LlmAdapter,
  request: LlmTurnRequest,
  sink: LlmTurnSink,
  stallMs: number,
  providerName: string,
): Promise<LlmTurnResult> {
  // The adapter's signal: aborted by a stall, or with the caller's reason when the caller aborts
  // (one listener, released at the end, instead of a combined signal per call).
  const stalled = new AbortController();
  const follow = () => stalled.abort(request.signal.reason);
  if (request.signal.aborted) follow();
  else request.signal.addEventListener('abort', follow, { once: true });
  let timer: NodeJS.Timeout | null = null;
  let toolsRunning = 0;
  /** When the provider last showed a sign of life (monotonic ms). */
  let lastSign = 0;
  const quiet = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  // One timer per silence, not one per chunk (clearing and setting a timer for each of a reply's
  // chunks was a measurable part of a turn): when it fires early, it waits for what is left.
  const expire = () => {
    const left = lastSign + stallMs - performance.now();
    if (left > 0) timer = setTimeout(expire, left);
    else {
      timer = null;
      stalled.abort();
    }
  };
  // Restarted by every sign of life; paused while a tool runs.
  const watch = () => {
    lastSign = performance.now();
    if (toolsRunning === 0 && !stalled.signal.aborted)
      timer ??= setTimeout(expire, stallMs);
  };
  const stallError = () =>
    new LlmProviderError(
      'stalled',
      `${providerName} sent nothing for ${seconds(stallMs)}, so the reply was stopped. Try again; if it keeps happening, the provider may be overloaded.`,
    );
  watch();
  try {
    const result = await adapter.streamTurn(
      { ...request, signal: stalled.signal },
      forwardingSink(sink, {
        onText: (delta) => {
          watch();
          sink.onText(delta);
        },
        onActivity: () => {
          watch();
          sink.onActivity?.();
        },
        executeTool: async (call) => {
          toolsRunning += 1;
          quiet();
          try {
            return await sink.executeTool(call);
          } finally {
            toolsRunning -= 1;
            watch();
          }
        },
      }),
    );
    if (stalled.signal.aborted && !request.signal.aborted) throw stallError();
    return result;
  } catch (error) {
    if (stalled.signal.aborted && !request.signal.aborted) throw stallError();
    throw error;
  } finally {
    quiet();
    request.signal.removeEventListener('abort', follow);
  }
}

/** 60000 → "60 s", 1500 → "1.5 s". */
function seconds(ms: number): string {
  return `${Number.isInteger(ms / 1000) ? ms / 1000 : (ms / 1000).toFixed(1)} s`;
}
