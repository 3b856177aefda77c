/**
 * A local stand-in for DuckDuckGo's HTML results page, scripted per test.
 *
 * One HTTP server on 127.0.0.1 answers `POST /html/` (form field `q`) and
 * `GET /html/?q=…` with the markup of html.duckduckgo.com: an ad first
 * (`.result--ad`, a `/y.js` link), then organic results whose links go through
 * DuckDuckGo's redirect (`//duckduckgo.com/l/?uddg=<url>&rut=…`), titles and
 * snippets with `<b>` marks and entities. It can also answer the bot check page
 * DuckDuckGo shows to addresses that search too often, or an HTTP error.
 *
 * Plain Node (no test framework imports): used by Jest specs and Playwright alike.
 */
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One organic result: `title` and `snippet` are HTML (may hold `<b>` and entities). */
export interface FakeDuckDuckGoResult {
  title: string;
  url: string;
  snippet: string;
}

export type FakeDuckDuckGoReply =
  | { results: FakeDuckDuckGoResult[]; delayMs?: number }
  /** DuckDuckGo's "anomaly" bot check (HTTP 202 with a challenge form). */
  | { botCheck: true; delayMs?: number }
  | { status: number; body?: string; delayMs?: number };

export type FakeDuckDuckGoScript =
  | FakeDuckDuckGoReply
  | ((request: FakeDuckDuckGoRequest) => FakeDuckDuckGoReply);

export interface FakeDuckDuckGoRequest {
  method: string;
  path: string;
  /** The search terms (form field or query parameter `q`). */
  q: string | null;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeDuckDuckGoServer {
  /** `http://127.0.0.1:<port>`: what `DUCKDUCKGO_BASE_URL` should be. */
  url: string;
  enqueue(...replies: FakeDuckDuckGoScript[]): void;
  /** Answer when the queue is empty; `null` (default) answers HTTP 500. */
  fallback: FakeDuckDuckGoScript | null;
  readonly requests: FakeDuckDuckGoRequest[];
  reset(): void;
  close(): Promise<void>;
}

/** `count` results for `query`, numbered, with a `<b>` mark and an entity in each snippet. */
export function fakeDuckDuckGoResults(
  query: string,
  count: number,
): FakeDuckDuckGoResult[] {
  return Array.from({ length: count }, (_, i) => ({
    title: `${query} &ndash; page ${i + 1}`,
    url: `https://example.org/${encodeURIComponent(query)}/${i + 1}?a=1&b=2`,
    snippet: `All about <b>${query}</b> &amp; friends, part ${i + 1}.`,
  }));
}

const escapeAttribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

function resultsPage(query: string, results: FakeDuckDuckGoResult[]): string {
  const ad = `
<div class="result results_links results_links_deep result--ad ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bingv7aa&amp;u3=x">Buy ${escapeAttribute(query)} now</a>
    </h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example">Sponsored: the best deals.</a>
  </div>
</div>`;
  const organic = results
    .map(
      (r) => `
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=abc123">${r.title}</a>
    </h2>
    <div class="result__extras">
      <div class="result__extras__url">
        <a class="result__url" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=abc123">${escapeAttribute(new URL(r.url).host)}</a>
      </div>
    </div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=abc123">${r.snippet}</a>
    <div class="clear"></div>
  </div>
</div>`,
    )
    .join('\n');
  const none = results.length
    ? ''
    : '<div class="no-results">No results found for <b>' +
      escapeAttribute(query) +
      '</b>.</div>';
  return `<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>${escapeAttribute(query)} at DuckDuckGo</title></head>
<body class="body--html">
<div id="links" class="results">${ad}${organic}${none}</div>
</body></html>`;
}

const BOT_CHECK_PAGE = `<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<div class="anomaly-modal__modal" data-testid="anomaly-modal">
  <div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
  <form id="challenge-form" action="/anomaly.js?sv=html" method="POST"></form>
</div></body></html>`;

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
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export async function startFakeDuckDuckGoServer(): Promise<FakeDuckDuckGoServer> {
  const queue: FakeDuckDuckGoScript[] = [];
  const requests: FakeDuckDuckGoRequest[] = [];
  const sockets = new Set<Socket>();
  let fallback: FakeDuckDuckGoScript | null = null;

  const server = createServer((req, res) => {
    void (async () => {
      const parsed = new URL(req.url ?? '/', 'http://fake-duckduckgo');
      const body = await readBody(req);
      const q =
        req.method === 'POST'
          ? new URLSearchParams(body).get('q')
          : parsed.searchParams.get('q');
      const request: FakeDuckDuckGoRequest = {
        method: req.method ?? 'GET',
        path: parsed.pathname,
        q,
        headers: req.headers,
      };
      requests.push(request);
      const html = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=UTF-8' });
        res.end(text);
      };
      if (request.path !== '/html/' && request.path !== '/html')
        return html(404, 'fake-duckduckgo: unknown route');
      const script = queue.shift() ?? fallback;
      const reply: FakeDuckDuckGoReply =
        script === null
          ? { status: 500, body: 'fake-duckduckgo: no scripted reply' }
          : typeof script === 'function'
            ? script(request)
            : script;
      if (!(await wait(req, res, reply.delayMs ?? 0))) return;
      if ('botCheck' in reply) return html(202, BOT_CHECK_PAGE);
      if ('status' in reply) return html(reply.status, reply.body ?? '');
      html(200, resultsPage(q ?? '', reply.results));
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
    enqueue: (...replies) => void queue.push(...replies),
    get fallback() {
      return fallback;
    },
    set fallback(script) {
      fallback = script;
    },
    requests,
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
