import type { LlmProviderError } from '../llm-adapter';
import { SystemClock } from '../../clock/clock';

/** A model call is sent at most this many times more after a transient failure. */
export const PROVIDER_RETRIES = 2;
/** The wait before each new attempt when the provider names none. */
const BACKOFF_MS = [250, 1_000];
/** A longer `Retry-After` than this is not waited for: the call fails at once with the provider's words. */
export const MAX_RETRY_AFTER_MS = 5_000;

/**
 * A failure worth one more attempt: the provider was not reached or dropped the
 * connection, was overloaded (429, 5xx) or asked for the request again (408, 409).
 * Never a refusal of the request itself (other 4xx), a key, credit or budget problem.
 */
export function isTransient(error: LlmProviderError): boolean {
  switch (error.kind) {
    case 'network':
    case 'rate-limit':
      return true;
    case 'server':
      return error.status !== undefined && error.status >= 500;
    case 'bad-request':
      return error.status === 408 || error.status === 409;
    default:
      return false;
  }
}

/**
 * A `Retry-After` (seconds or an HTTP date) or `retry-after-ms` header in milliseconds. An HTTP date is
 * the provider's wall clock, so it is compared with the system's (the adapters hold no Clock).
 */
export function retryAfterMs(
  header: (name: string) => string | null | undefined,
  now = new SystemClock().now().getTime(),
): number | undefined {
  const ms = Number(header('retry-after-ms'));
  if (header('retry-after-ms') && Number.isFinite(ms)) return Math.max(0, ms);
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1_000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryPolicy {
  signal: AbortSignal;
  /** The failure in the adapter's terms, or null when it must not be retried whatever its kind. */
  classify(error: unknown): LlmProviderError | null;
  /** What the provider asked to wait, when it said. */
  retryAfter?(error: unknown): number | undefined;
}

/**
 * Sends one model call, again after a transient failure (at most
 * `PROVIDER_RETRIES` times, a short wait between). `send` must cover only what
 * happens before the call's first chunk reaches anyone — the budget's
 * `beforeCall` (so each attempt is reserved and settled as its own call), the
 * request and the wait for the first chunk — so an attempt that is repeated
 * never produced text or a tool call.
 */
export async function sendWithRetries<T>(
  send: () => Promise<T>,
  policy: RetryPolicy,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await send();
    } catch (error) {
      if (policy.signal.aborted || retry >= PROVIDER_RETRIES) throw error;
      const failure = policy.classify(error);
      if (!failure || !isTransient(failure)) throw error;
      const asked = policy.retryAfter?.(error);
      if (asked !== undefined && asked > MAX_RETRY_AFTER_MS) throw error;
      await pause(asked ?? BACKOFF_MS[retry] ?? 1_000, policy.signal);
      if (policy.signal.aborted) throw error;
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** The first result already read, then the rest of the iterator (the iterator is closed when the reader stops early). */
export async function* continueFrom<T>(
  first: IteratorResult<T>,
  rest: AsyncIterator<T>,
): AsyncGenerator<T> {
  let finished = first.done === true;
  try {
    if (first.done) return;
    yield first.value;
    for (;;) {
      const next = await rest.next();
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!finished) await rest.return?.();
  }
}
