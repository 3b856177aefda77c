import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkServerHost, pinnedLookup } from './account-address';

/** CalDAV answers are XML listings and iCalendar objects; a larger one is not a calendar. */
const MAX_CALDAV_RESPONSE_BYTES = 32 * 1024 * 1024;
const CALDAV_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * The `fetch` tsdav uses for every CalDAV request: each URL's host (the account's,
 * a redirect's, a discovered principal or calendar home on another host) is
 * resolved once and checked by the accounts' address guard, and the socket
 * connects to the checked address (TLS verifies the certificate against the
 * host name). Redirects are followed here, one checked hop at a time, unless the
 * caller asks for `redirect: 'manual'` (tsdav's service discovery reads them).
 */
export const guardedCalDavFetch: typeof fetch = async (input, init) => {
  let url = new URL(
    typeof input === 'string'
      ? input
      : input instanceof URL
        ? input.href
        : input.url,
  );
  let method = (init?.method ?? 'GET').toUpperCase();
  let body = requestBody(init?.body);
  const headers = new Headers(init?.headers);
  for (let hops = 0; ; hops++) {
    const response = await requestOnce(url, method, headers, body, init);
    const location = response.headers.get('location');
    if (
      init?.redirect === 'manual' ||
      !REDIRECTS.has(response.status) ||
      !location
    )
      return response;
    if (hops >= MAX_REDIRECTS)
      throw new Error(
        `Too many redirects from the CalDAV server at ${url.host}`,
      );
    const next = new URL(location, url);
    // As fetch does: the login goes no further than the origin it was given for.
    if (next.origin !== url.origin) headers.delete('authorization');
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) &&
        method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
    }
    url = next;
  }
};

function requestBody(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body));
  throw new TypeError('Unsupported CalDAV request body');
}

async function requestOnce(
  url: URL,
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  init: RequestInit | undefined,
): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`Only http(s) CalDAV URLs are followed (${url.href})`);
  const to = await checkServerHost(url.hostname, 'CalDAV server');
  const sent: Record<string, string> = {};
  headers.forEach((value, name) => (sent[name] = value));
  if (body) sent['content-length'] = String(body.length);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const incoming = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({
      host: to.address,
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method,
      headers: { host: url.host, ...sent },
      agent: false,
      lookup: pinnedLookup(to.address),
      servername: to.servername,
      signal: init?.signal ?? undefined,
      timeout: CALDAV_TIMEOUT_MS,
    });
    req.on('response', resolve);
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
    );
    // Worded like undici's, so the CalDAV error text reads the cause's code.
    req.on('error', (error) =>
      reject(new TypeError('fetch failed', { cause: error })),
    );
    req.end(body);
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CALDAV_RESPONSE_BYTES) {
      incoming.destroy();
      throw new Error(
        `The CalDAV server at ${url.host} sent more than ${MAX_CALDAV_RESPONSE_BYTES / 1024 / 1024} MB`,
      );
    }
    chunks.push(chunk);
  }
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(incoming.headers))
    for (const one of Array.isArray(value) ? value : [value])
      if (one !== undefined) responseHeaders.append(name, one);
  const status = incoming.statusCode ?? 502;
  const response = new Response(
    NULL_BODY.has(status) ? null : Buffer.concat(chunks),
    {
      status,
      statusText: incoming.statusMessage ?? '',
      headers: responseHeaders,
    },
  );
  // tsdav reads `response.url` as the answering resource's href.
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}
