import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import {
  constants as zlib,
  createBrotliDecompress,
  createGunzip,
  createInflate,
} from 'node:zlib';

/** A body's pieces (Node's buffers never sit on a SharedArrayBuffer). */
type Bytes = Uint8Array<ArrayBuffer>;

/** The `fetch` the provider SDKs accept (`new OpenAI({ fetch })`, Gemini's `httpOptions.fetch`). */
export type ProviderFetch = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export interface ProviderFetchOptions {
  /**
   * A request that receives nothing for this long fails, as Node's own `fetch` makes it do (undici's
   * `headersTimeout`/`bodyTimeout`, 300 s); 0 waits for ever (the Gemini SDK turns them off).
   */
  silenceTimeoutMs: number;
}

/** Node's `fetch` (undici) gives up on a silent response after this by default. */
export const UNDICI_SILENCE_TIMEOUT_MS = 300_000;

/** A pooled connection left idle this long is closed (undici's default keep-alive timeout). */
const IDLE_CONNECTION_MS = 4_000;

/** One pool per scheme for every provider client, as Node's `fetch` shares its global dispatcher. */
const agents = {
  http: new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  https: new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
};

const ZLIB_FLUSH = {
  flush: zlib.Z_SYNC_FLUSH,
  finishFlush: zlib.Z_SYNC_FLUSH,
};
const BROTLI_FLUSH = {
  flush: zlib.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.BROTLI_OPERATION_FLUSH,
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** fetch's own limit. */
const MAX_REDIRECTS = 20;
/** Dropped when a redirect turns the request into a GET. */
const CONTENT_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];
/** Dropped on a redirect to another origin, as Node's fetch does. */
const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
];
/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Large enough that a streamed reply never waits on its reader, small enough to bound a stuck one. */
const BODY_HIGH_WATER_MARK = 64 * 1024;

/**
 * A `fetch` over `node:http(s)` with keep-alive pools, for the model calls' SDK clients. Node's own
 * `fetch` (undici) costs about 0.6 ms of CPU more per streamed call (its Request/Response machinery,
 * signal plumbing, the body written apart from the headers, a byte stream per response); this one
 * sends the request in one write and hands the body over as a plain `ReadableStream`. What the
 * SDKs see is what undici gave them: a `Response` (`ProviderResponse`, below); `TypeError('fetch failed', { cause })`
 * when no response came, a body erroring with `TypeError('terminated', { cause })` when the
 * connection drops mid-reply; the signal's reason (an `AbortError`) on abort, before or during the
 * body; the silence timeouts with undici's codes; gzip/deflate/br bodies decoded; redirects followed
 * with fetch's rules. A `Request` object or a streamed or form body (no model call sends one) goes
 * to Node's `fetch` unchanged.
 */
export function createProviderFetch(
  options: ProviderFetchOptions,
): ProviderFetch {
  return (input, init) => {
    const url =
      typeof input === 'string'
        ? input
        : input instanceof URL
          ? input.href
          : null;
    if (url === null || !/^https?:/i.test(url) || !isPlainBody(init?.body))
      return fetch(input, init);
    if (init?.signal?.aborted) return Promise.reject(abortReason(init.signal));
    return new ProviderExchange(url, init ?? {}, options).response;
  };
}

function isPlainBody(body: RequestInit['body']): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer
  );
}

/** One request and its response, from the first byte sent to the body's end. */
class ProviderExchange {
  readonly response: Promise<Response>;
  private resolve!: (response: Response | Promise<Response>) => void;
  private reject!: (error: unknown) => void;
  /** Set once the `Response` is handed over: later failures error its body instead. */
  private body: ReadableStreamDefaultController<Bytes> | null = null;
  private settled = false;
  private readonly req: ReturnType<typeof httpRequest>;
  private res: IncomingMessage | null = null;

  constructor(
    private readonly url: string,
    private readonly init: RequestInit,
    private readonly options: ProviderFetchOptions,
    private readonly redirects = 0,
  ) {
    this.response = new Promise<Response>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const { signal } = init;
    const payload = toPayload(init.body);
    const secure = /^https:/i.test(url);
    this.req = (secure ? httpsRequest : httpRequest)(url, {
      method: init.method ?? 'GET',
      headers: requestHeaders(init.headers, payload),
      agent: secure ? agents.https : agents.http,
    });
    this.req.on('error', (error) => this.fail(error));
    signal?.addEventListener('abort', this.abort, { once: true });
    this.req.setTimeout(options.silenceTimeoutMs, this.silent);
    this.req.on('response', (res) => this.received(res));
    this.req.end(payload);
  }

  private readonly abort = (): void => {
    if (this.init.signal) this.finish(abortReason(this.init.signal));
  };

  private readonly silent = (): void => {
    const error = this.body
      ? undiciError(
          'BodyTimeoutError',
          'Body Timeout Error',
          'UND_ERR_BODY_TIMEOUT',
        )
      : undiciError(
          'HeadersTimeoutError',
          'Headers Timeout Error',
          'UND_ERR_HEADERS_TIMEOUT',
        );
    this.fail(error);
  };

  /** A failure of the connection: before the response `fetch failed`, during its body `terminated`. */
  private fail(cause: unknown): void {
    this.finish(
      new TypeError(this.body ? 'terminated' : 'fetch failed', { cause }),
    );
  }

  /** Ends the exchange with `error` (once), closing the connection. */
  private finish(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.init.signal?.removeEventListener('abort', this.abort);
    if (this.body) this.body.error(error);
    else this.reject(error);
    this.res?.destroy();
    this.req.destroy();
  }

  /** The body was read to its end: the connection goes back to the pool. */
  private done(): void {
    if (this.settled) return;
    this.settled = true;
    this.init.signal?.removeEventListener('abort', this.abort);
    this.body?.close();
  }

  private received(res: IncomingMessage): void {
    this.res = res;
    const status = res.statusCode ?? 0;
    if (
      REDIRECTS.has(status) &&
      res.headers.location &&
      this.init.redirect !== 'manual'
    ) {
      this.redirect(status, res.headers.location);
      return;
    }
    let response: Response;
    try {
      const headers = new Headers();
      const raw = res.rawHeaders;
      for (let i = 0; i < raw.length; i += 2)
        headers.append(raw[i], raw[i + 1]);
      if (status < 200 || status > 599)
        throw new RangeError(`status ${status} is not a response status`);
      const noBody = NULL_BODY.has(status) || this.init.method === 'HEAD';
      response = new ProviderResponse(
        noBody ? null : this.bodyOf(res),
        status,
        REASON_PHRASE.test(res.statusMessage ?? '')
          ? (res.statusMessage ?? '')
          : '',
        headers,
        this.url,
        this.redirects > 0,
      );
      if (noBody) {
        res.resume();
        res.once('close', () => this.done());
      }
    } catch (error) {
      // A status outside 200–599 or a header a Response refuses: a network error for fetch too.
      this.body = null;
      this.fail(error);
      return;
    }
    this.resolve(response);
  }

  /** Follows a redirect as fetch does: same method and body, except 303 (and 301/302 after a POST) as a GET. */
  private redirect(status: number, location: string): void {
    this.settled = true;
    this.init.signal?.removeEventListener('abort', this.abort);
    this.res?.resume();
    let next: URL;
    try {
      next = new URL(location, this.url);
    } catch (error) {
      this.reject(new TypeError('fetch failed', { cause: error }));
      return;
    }
    if (
      this.init.redirect === 'error' ||
      this.redirects >= MAX_REDIRECTS ||
      !/^https?:$/.test(next.protocol)
    ) {
      this.reject(
        new TypeError('fetch failed', {
          cause: new Error(`redirect to ${next.protocol} refused`),
        }),
      );
      return;
    }
    const headers = new Headers(this.init.headers);
    const init: RequestInit = { ...this.init, headers };
    if (
      status === 303 ||
      ((status === 301 || status === 302) && this.init.method === 'POST')
    ) {
      init.method = 'GET';
      init.body = null;
      for (const name of CONTENT_HEADERS) headers.delete(name);
    }
    // The key is for the origin it was meant for.
    if (next.origin !== new URL(this.url).origin)
      for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    this.resolve(
      new ProviderExchange(next.href, init, this.options, this.redirects + 1)
        .response,
    );
  }

  private bodyOf(res: IncomingMessage): ReadableStream<Bytes> {
    const source = decoded(res);
    if (source !== res) source.on('error', (error) => this.fail(error));
    res.on('error', (error) => this.fail(error));
    res.on('close', () => {
      if (!res.complete) this.fail(new Error('other side closed'));
    });
    return new ReadableStream<Bytes>(
      {
        start: (controller) => {
          this.body = controller;
          source.on('data', (chunk: Buffer) => {
            if (this.settled) return;
            controller.enqueue(chunk as Bytes);
            if ((controller.desiredSize ?? 1) <= 0) source.pause();
          });
          source.once('end', () => this.done());
        },
        pull: () => {
          source.resume();
        },
        // The reader stopped early (`break`, `cancel()`): the connection cannot be reused.
        cancel: () => {
          this.settled = true;
          this.init.signal?.removeEventListener('abort', this.abort);
          res.destroy();
          this.req.destroy();
        },
      },
      {
        highWaterMark: BODY_HIGH_WATER_MARK,
        size: (chunk) => chunk.byteLength,
      },
    );
  }
}

/** What `Response` accepts as a status text. */
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The `Response` handed to the SDKs. A streamed reply only reads `status`, `ok`, `headers` and `body`,
 * and building a real `Response` for that cost ~0.15 ms per call (undici's WebIDL checks and a
 * second copy of the headers): the reading methods and `clone()` go to a real one built from the
 * same stream on first use, so they behave exactly as fetch's (a body already read is refused).
 */
class ProviderResponse implements Response {
  readonly type: ResponseType = 'basic';
  readonly ok: boolean;
  private real: Response | undefined;

  constructor(
    readonly body: ReadableStream<Bytes> | null,
    readonly status: number,
    readonly statusText: string,
    readonly headers: Headers,
    readonly url: string,
    readonly redirected: boolean,
  ) {
    this.ok = status >= 200 && status <= 299;
  }

  get bodyUsed(): boolean {
    return this.real ? this.real.bodyUsed : (this.body?.locked ?? false);
  }

  /** Built on first use; refuses (as fetch's does) a body already read through `body`. */
  private standard(): Response {
    return (this.real ??= new Response(this.body, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    }));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.standard().arrayBuffer();
  }

  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer());
  }

  async blob(): Promise<Blob> {
    return this.standard().blob();
  }

  async formData(): Promise<FormData> {
    return this.standard().formData();
  }

  async json(): Promise<unknown> {
    return this.standard().json();
  }

  async text(): Promise<string> {
    return this.standard().text();
  }

  clone(): Response {
    return this.standard().clone();
  }
}

/** What fetch rejects with on abort: the signal's reason. */
function abortReason(signal: AbortSignal): unknown {
  return (
    signal.reason ??
    new DOMException('This operation was aborted', 'AbortError')
  );
}

function toPayload(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return body as string | Uint8Array;
}

/** The request's headers as Node takes them, with the body's length as fetch sends it. */
function requestHeaders(
  init: RequestInit['headers'],
  payload: string | Uint8Array | undefined,
): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  (init instanceof Headers ? init : new Headers(init)).forEach(
    (value, name) => (headers[name] = value),
  );
  if (payload !== undefined && headers['content-length'] === undefined)
    headers['content-length'] =
      typeof payload === 'string'
        ? Buffer.byteLength(payload)
        : payload.byteLength;
  return headers;
}

/** The body with its content codings undone, as fetch returns it (unknown codings are left as they are). */
function decoded(res: IncomingMessage): Readable {
  const codings = (res.headers['content-encoding'] ?? '')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding && coding !== 'identity')
    .reverse();
  let source: Readable = res;
  for (const coding of codings) {
    // Flushed as undici does, so that a compressed stream's pieces come out as they arrive.
    const decoder =
      coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip(ZLIB_FLUSH)
        : coding === 'deflate'
          ? createInflate(ZLIB_FLUSH)
          : coding === 'br'
            ? createBrotliDecompress(BROTLI_FLUSH)
            : null;
    if (!decoder) return source;
    source = source.pipe(decoder);
  }
  return source;
}

/** An error shaped as undici's own (name, message, code), so callers read it the same way. */
function undiciError(name: string, message: string, code: string): Error {
  const error = new Error(message) as Error & { code: string };
  error.name = name;
  error.code = code;
  return error;
}
