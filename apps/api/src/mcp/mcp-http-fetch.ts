import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UrlFetchError, type UrlFetcher } from '../url-fetch/url-fetcher';

const METHODS = new Set(['GET', 'POST', 'DELETE'] as const);
type McpMethod = 'GET' | 'POST' | 'DELETE';

/** Response headers that describe the wire, which the fetcher already decoded. */
const WIRE_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/**
 * The `fetch` an MCP HTTP transport uses: every request goes through url_fetch's
 * guard (public addresses, or a private `host:port` the owner listed for this
 * server), pinned to the checked address. Redirects are answered as they are, never
 * followed: the owner's headers must not travel to a host the server names. For the
 * same reason they are dropped from requests to any other origin (the SDK's OAuth flow
 * sends its metadata and token requests with the transport's headers).
 */
export function guardedMcpFetch(
  fetcher: UrlFetcher,
  allowHosts: readonly string[],
  ownerHeaders: { origin: string; names: readonly string[] } | null = null,
): FetchLike {
  const dropped = new Set(ownerHeaders?.names.map((n) => n.toLowerCase()));
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input.href;
    const method = (init?.method ?? 'GET').toUpperCase() as McpMethod;
    if (!METHODS.has(method))
      throw new TypeError(`MCP requests are GET, POST or DELETE (${method})`);
    const headers: Record<string, string> = {};
    const elsewhere =
      ownerHeaders !== null && originOf(url) !== ownerHeaders.origin;
    new Headers(init?.headers).forEach((value, name) => {
      if (elsewhere && dropped.has(name.toLowerCase())) return;
      headers[name] = value;
    });
    const signal = init?.signal ?? new AbortController().signal;
    let opened;
    try {
      opened = await fetcher.open({
        url,
        method,
        headers,
        body: await bodyBytes(init?.body),
        allowHostPorts: allowHosts,
        signal,
        followRedirects: false,
      });
    } catch (error) {
      // fetch's contract: a network failure is a TypeError; keep the guard's words.
      if (error instanceof UrlFetchError) throw new TypeError(error.message);
      throw error;
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(opened.headers)) {
      if (value === undefined || WIRE_HEADERS.has(name)) continue;
      for (const one of Array.isArray(value) ? value : [value])
        responseHeaders.append(name, one);
    }
    const empty = opened.status === 204 || opened.status === 304;
    if (empty) opened.body.resume();
    return new Response(
      empty ? null : (Readable.toWeb(opened.body) as ReadableStream),
      { status: opened.status, headers: responseHeaders },
    );
  };
}

async function bodyBytes(
  body: RequestInit['body'] | undefined,
): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body))
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
