/**
 * A local stand-in for the Brave Search web API, scripted per test.
 *
 * One HTTP server on 127.0.0.1 answers `GET /res/v1/web/search?q=…&count=…` with Brave's
 * JSON (`{ type: 'search', query: { original }, web: { type: 'search', results: [...] } }`),
 * or a scripted HTTP error in Brave's error shape, optionally after a delay. Every request
 * is recorded (path, query, headers, the `X-Subscription-Token`).
 *
 * Plain Node (no test framework imports): used by Jest specs and Playwright alike.
 */
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One web result as Brave sends it: `description` may hold `<strong>` marks and HTML entities. */
export interface FakeBraveResult {
  title: string;
  url: string;
  description: string;
}

/** A successful answer. */
export interface FakeBraveResults {
  results: FakeBraveResult[];
  /** Wait this long before answering (default 0). */
  delayMs?: number;
}

/** An HTTP error in Brave's shape (`{ type: 'ErrorResponse', error: { status, code, detail } }`), or `body` verbatim. */
export interface FakeBraveError {
  status: number;
  detail?: string;
  /** Sent as is instead of Brave's error shape (a string is sent raw, e.g. to send something that is not JSON). */
  body?: unknown;
  delayMs?: number;
}

export type FakeBraveReply = FakeBraveResults | FakeBraveError;

/** A reply, or a function choosing one from the request (e.g. to echo the query). */
export type FakeBraveScript =
  | FakeBraveReply
  | ((request: FakeBraveRequest) => FakeBraveReply);

export interface FakeBraveRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The `X-Subscription-Token` header, or null. */
  token: string | null;
}

export interface FakeBraveServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `${url}/res/v1`, as the real API's base: what `BRAVE_SEARCH_BASE_URL` should be. */
  baseUrl: string;
  /** Replies answered in order, one per search. */
  enqueue(...replies: FakeBraveScript[]): void;
  /** Answer when the queue is empty; `null` (default) answers HTTP 500. */
  fallback: FakeBraveScript | null;
  /** Every request received, oldest first. */
  readonly requests: FakeBraveRequest[];
  readonly pending: number;
  /** Clears the queue, the fallback and the recorded requests. */
  reset(): void;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

/** `count` results for `query`, numbered, with a `<strong>` mark and an entity in each description. */
export function fakeBraveResults(
  query: string,
  count: number,
): FakeBraveResult[] {
  return Array.from({ length: count }, (_, i) => ({
    title: `${query} – result ${i + 1}`,
    url: `https://example.com/${encodeURIComponent(query)}/${i + 1}`,
    description: `About <strong>${query}</strong> &amp; more, part ${i + 1}.`,
  }));
}

const ERROR_CODES: Record<number, string> = {
  401: 'SUBSCRIPTION_TOKEN_INVALID',
  403: 'SUBSCRIPTION_TOKEN_INVALID',
  422: 'VALIDATION',
  429: 'RATE_LIMITED',
};

function isError(reply: FakeBraveReply): reply is FakeBraveError {
  return typeof (reply as FakeBraveError).status === 'number';
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Waits, or stops waiting when the client went away. Resolves false in that case. */
function wait(
  req: IncomingMessage,
  res: ServerResponse,
  ms: number,
): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(!res.destroyed), ms);
    res.on('close', () => {
      clearTimeout(timer);
      resolve(false);
    });
    req.on('aborted', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

export async function startFakeBraveServer(): Promise<FakeBraveServer> {
  const queue: FakeBraveScript[] = [];
  const requests: FakeBraveRequest[] = [];
  const sockets = new Set<Socket>();
  let fallback: FakeBraveScript | null = null;

  const server = createServer((req, res) => {
    void (async () => {
      const parsed = new URL(req.url ?? '/', 'http://fake-brave');
      const token = req.headers['x-subscription-token'];
      const request: FakeBraveRequest = {
        method: req.method ?? 'GET',
        path: parsed.pathname,
        query: Object.fromEntries(parsed.searchParams),
        headers: req.headers,
        token: typeof token === 'string' ? token : null,
      };
      requests.push(request);
      if (request.method !== 'GET' || request.path !== '/res/v1/web/search') {
        return send(res, 404, {
          type: 'ErrorResponse',
          error: {
            status: 404,
            code: 'NOT_FOUND',
            detail: 'fake-brave: unknown route',
          },
        });
      }
      const script = queue.shift() ?? fallback;
      const reply: FakeBraveReply =
        script === null
          ? { status: 500, detail: 'fake-brave: no scripted reply' }
          : typeof script === 'function'
            ? script(request)
            : script;
      if (!(await wait(req, res, reply.delayMs ?? 0))) return;
      if (isError(reply)) {
        const body = reply.body ?? {
          type: 'ErrorResponse',
          error: {
            id: 'fake',
            status: reply.status,
            code: ERROR_CODES[reply.status] ?? 'INTERNAL',
            detail: reply.detail ?? 'fake-brave error',
            meta: {},
          },
          time: Math.floor(Date.now() / 1000),
        };
        return send(res, reply.status, body);
      }
      send(res, 200, {
        type: 'search',
        query: {
          original: request.query['q'] ?? '',
          more_results_available: false,
        },
        mixed: {
          type: 'mixed',
          main: reply.results.map((_, index) => ({
            type: 'web',
            index,
            all: false,
          })),
        },
        web: {
          type: 'search',
          family_friendly: true,
          results: reply.results.map((r) => ({
            type: 'search_result',
            title: r.title,
            url: r.url,
            description: r.description,
            language: 'en',
          })),
        },
      });
    })().catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    baseUrl: `${url}/res/v1`,
    enqueue: (...replies) => void queue.push(...replies),
    get fallback() {
      return fallback;
    },
    set fallback(script) {
      fallback = script;
    },
    requests,
    get pending() {
      return queue.length;
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      fallback = null;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
