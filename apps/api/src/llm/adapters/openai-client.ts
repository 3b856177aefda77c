import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
} from 'openai';

/** What a POST to one path sends apart from its body: the SDK's own URL, headers and time limit. */
interface PostShape {
  url: string;
  headers: HeadersInit;
  timeout: number;
}

const JSON_BODY = { 'content-type': 'application/json' };

/**
 * The OpenAI SDK's client with one more way to post a streamed request:
 * `postJsonStream(path, bytes, signal)` answers what
 * `client.post(path, { body: bytes, headers: { 'content-type': 'application/json' }, stream: true, signal }).asResponse()`
 * answers with `maxRetries: 0`, the response or the same error (`APIUserAbortError`,
 * `APIConnectionTimeoutError`, `APIConnectionError`, the status errors of `makeStatusError`).
 *
 * The SDK rebuilds the request's URL and headers on every call (its header sources merged into a
 * `Headers`, the platform's headers, the key), formats its debug log line's details, copies the
 * response's headers for its info line and wraps the call in its promise types: about 0.15 ms of
 * CPU a call, the same for every call of a client. Here the URL, headers and time limit are made
 * once per path by the SDK's own `buildRequest`, and the call goes through its `fetchWithTimeout`
 * (its time limit up to the response's headers, the caller's abort). Nothing else of the SDK's
 * path applies to these calls: its hooks (`prepareOptions`, `prepareRequest`) do nothing in
 * `OpenAI`, retries are the adapter's own, and the key is a fixed one (no token to refresh). The
 * SDK's own log lines for these calls (`OPENAI_LOG=info` or `debug`) are not written; a failed
 * call reaches the owner as the reply's error, as before.
 */
export class OpenAiClient extends OpenAI {
  private readonly shapes = new Map<string, Promise<PostShape>>();

  async postJsonStream(
    path: string,
    body: Uint8Array,
    signal?: AbortSignal,
  ): Promise<Response> {
    const shape = await this.shapeOf(path);
    if (signal?.aborted) throw new APIUserAbortError();
    const response = await this.fetchWithTimeout(
      shape.url,
      // A Uint8Array is a fetch body (the DOM types name its buffer's kind too narrowly).
      {
        method: 'POST',
        headers: shape.headers,
        body: body as BodyInit,
        signal,
      },
      shape.timeout,
      new AbortController(),
    ).catch(asError);
    if (response instanceof Error) throw failedCall(response, signal);
    if (!response.ok) {
      const text = await response
        .text()
        .catch((error: unknown) => asError(error).message);
      const json = safeJson(text);
      throw this.makeStatusError(
        response.status,
        json as object,
        json ? undefined : text,
        response.headers,
      );
    }
    return response;
  }

  private shapeOf(path: string): Promise<PostShape> {
    let shape = this.shapes.get(path);
    if (!shape) {
      shape = this.buildRequest(
        {
          method: 'post',
          path,
          body: new Uint8Array(0),
          headers: JSON_BODY,
          stream: true,
        },
        { retryCount: 0 },
      ).then(({ req, url, timeout }) => ({
        url,
        headers: req.headers as HeadersInit,
        timeout,
      }));
      // A failure is not kept: the next call builds again, as the SDK would.
      shape.catch(() => this.shapes.delete(path));
      this.shapes.set(path, shape);
    }
    return shape;
  }
}

/**
 * The SDK's error for a call whose fetch failed (its `makeRequest`): the caller's abort, a
 * connection that timed out (its own time limit's abort, or a message that says so), or any other
 * connection failure.
 */
export function failedCall(
  error: Error,
  signal?: AbortSignal,
): APIUserAbortError | APIConnectionTimeoutError | APIConnectionError {
  if (signal?.aborted) return new APIUserAbortError();
  if (isTimeout(error)) return new APIConnectionTimeoutError();
  return new APIConnectionError({ cause: error });
}

/** The SDK's `castToError`, for what a fetch rejects with. */
export function asError(error: unknown): Error {
  if (error instanceof Error) return error;
  if (typeof error === 'object' && error !== null) {
    if (Object.prototype.toString.call(error) === '[object Error]') {
      const { message, cause, name, stack } = error as Error;
      const copy = new Error(message, cause ? { cause } : {});
      if (stack) copy.stack = stack;
      if (name) copy.name = name;
      return copy;
    }
    try {
      return new Error(JSON.stringify(error));
    } catch {
      // Not JSON: as a string below.
    }
  }
  return new Error(String(error));
}

/** The SDK's test for a connection that timed out: its own abort, or a message that says so. */
function isTimeout(error: Error): boolean {
  return (
    error.name === 'AbortError' ||
    String(error.message).includes('FetchRequestCanceledException') ||
    /timed? ?out/i.test(
      String(error) + ('cause' in error ? String(error.cause) : ''),
    )
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
