import { Injectable } from '@nestjs/common';
import { lookup as dnsLookup } from 'node:dns/promises';
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import {
  decideAddress,
  hostPort,
  isLocalhostName,
  parseFetchUrl,
  type ParsedFetchUrl,
} from './address-guard';

/** A fetch that failed or was refused, with a sentence for the model (never a secret). */
export class UrlFetchError extends Error {}

/** Resolves a host name to every address it has. Tests replace it to answer without DNS. */
@Injectable()
export class HostResolver {
  async lookup(host: string): Promise<string[]> {
    const answers = await dnsLookup(host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  }
}

export const URL_FETCH_MAX_REDIRECTS = 3;

export type FetchMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A header the owner's auth profile adds, only to URLs under its prefix. */
export interface FetchAuth {
  urlPrefix: string;
  header: string;
  value: string;
}

export interface FetchRequest {
  url: string;
  method: FetchMethod;
  /** Already checked against the allow-list. */
  headers: Record<string, string>;
  body?: Buffer;
  auth?: FetchAuth | null;
  allowHostPorts: readonly string[];
  /** Aborts everything: DNS, connect, redirects and reading the body (Stop, the timeout). */
  signal: AbortSignal;
  /** False: a redirect is answered as it is (a caller whose headers must not follow it to another host: MCP). */
  followRedirects?: boolean;
}

/** The final response after redirects; `body` is decoded (gzip, deflate, br). */
export interface OpenedResponse {
  url: string;
  status: number;
  headers: IncomingHttpHeaders;
  contentType: string | null;
  redirects: number;
  /** Whether the auth profile's header went with the final request. */
  authSent: boolean;
  body: Readable;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Whether `url` lies under an auth profile's `urlPrefix`: same origin, and the path starts with the prefix's. */
export function matchesUrlPrefix(url: URL, prefix: string): boolean {
  let base: URL;
  try {
    base = new URL(prefix);
  } catch {
    return false;
  }
  return (
    url.origin === base.origin &&
    (url.pathname + url.search).startsWith(base.pathname + base.search)
  );
}

/**
 * HTTP(S) requests that only ever reach addresses the guard allowed: the host is
 * resolved once, every address is checked, and the socket connects to the checked
 * address through a `lookup` that returns it (no second DNS answer can swap it).
 * TLS still verifies the certificate against the host name. Each redirect is
 * parsed and checked the same way, at most {@link URL_FETCH_MAX_REDIRECTS}.
 */
@Injectable()
export class UrlFetcher {
  constructor(private readonly resolver: HostResolver) {}

  async open(request: FetchRequest): Promise<OpenedResponse> {
    const first = parseFetchUrl(request.url);
    if (!first.ok) throw new UrlFetchError(first.error);
    let target = first.value;
    let method = request.method;
    let body = request.body;
    let headers = { ...request.headers };
    for (let redirects = 0; ; redirects++) {
      const address = await this.checkedAddress(target, request);
      const authSent =
        !!request.auth && matchesUrlPrefix(target.url, request.auth.urlPrefix);
      const sent: Record<string, string> = {
        'Accept-Encoding': 'gzip, deflate, br',
        'User-Agent': 'MetatronOS-url_fetch/1.0',
        ...headers,
      };
      if (authSent && request.auth)
        sent[request.auth.header] = request.auth.value;
      if (body) sent['Content-Length'] = String(body.length);
      const response = await this.send(
        target,
        address,
        method,
        sent,
        body,
        request.signal,
      );
      const location = response.headers.location;
      if (
        !REDIRECTS.has(response.statusCode ?? 0) ||
        !location ||
        request.followRedirects === false
      )
        return {
          url: target.url.href,
          status: response.statusCode ?? 0,
          headers: response.headers,
          contentType: response.headers['content-type'] ?? null,
          redirects,
          authSent,
          body: decoded(response),
        };
      response.destroy();
      if (redirects >= URL_FETCH_MAX_REDIRECTS)
        throw new UrlFetchError(
          `Too many redirects: more than ${URL_FETCH_MAX_REDIRECTS} (the last one pointed to ${clip(location)})`,
        );
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new UrlFetchError(
          `The server redirected to '${clip(location)}', which is not a valid URL`,
        );
      }
      const parsed = parseFetchUrl(next.href);
      if (!parsed.ok)
        throw new UrlFetchError(
          `Redirect to ${clip(next.href)} refused: ${parsed.error}`,
        );
      target = parsed.value;
      const status = response.statusCode ?? 0;
      if (
        status === 303 ||
        ((status === 301 || status === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(
          Object.entries(headers).filter(([name]) => name !== 'Content-Type'),
        );
      }
    }
  }

  /** The address to connect to; throws the guard's reason when any address of the host is refused. */
  private async checkedAddress(
    target: ParsedFetchUrl,
    request: FetchRequest,
  ): Promise<string> {
    const { host, port } = target;
    const context = { allowHostPorts: request.allowHostPorts, host, port };
    const listed = request.allowHostPorts.includes(hostPort(host, port));
    let addresses: string[];
    if (target.isIp) addresses = [host];
    else if (isLocalhostName(host)) {
      if (!listed)
        throw new UrlFetchError(
          `Refused: ${host} is a loopback name (${refusalHint(host, port)})`,
        );
      addresses = ['127.0.0.1'];
    } else {
      addresses = await this.resolve(host, request.signal);
    }
    const decisions = addresses.map((a) => decideAddress(a, context));
    const refused = decisions.find((d) => !d.allowed);
    if (refused && !refused.allowed) {
      const subject = target.isIp
        ? refused.reason
        : `${host} resolves to ${refused.address}, ${refused.text}`;
      throw new UrlFetchError(
        `Refused: ${subject} (${refused.listable ? refusalHint(host, port) : 'never allowed'})`,
      );
    }
    // One address, already checked: IPv4 first, as it is reachable from more networks.
    return addresses.find((a) => isIP(a) === 4) ?? addresses[0];
  }

  private async resolve(host: string, signal: AbortSignal): Promise<string[]> {
    let addresses: string[];
    try {
      addresses = await abortable(this.resolver.lookup(host), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      const code = (error as { code?: unknown }).code;
      throw new UrlFetchError(
        `Could not resolve ${host}${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    }
    if (addresses.length === 0)
      throw new UrlFetchError(`Could not resolve ${host}: no addresses`);
    return addresses;
  }

  private send(
    target: ParsedFetchUrl,
    address: string,
    method: FetchMethod,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    const family = isIP(address);
    // Every lookup the socket makes answers the checked address: no second DNS answer.
    const pinned = ((_host, options, callback) => {
      if ((options as { all?: boolean }).all)
        (
          callback as (
            e: null,
            a: { address: string; family: number }[],
          ) => void
        )(null, [{ address, family }]);
      else
        (callback as (e: null, a: string, f: number) => void)(
          null,
          address,
          family,
        );
    }) as LookupFunction;
    const options: RequestOptions & { servername?: string } = {
      host: target.host,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      method,
      headers,
      agent: false,
      lookup: pinned,
      signal,
    };
    if (target.url.protocol === 'https:' && !target.isIp)
      options.servername = target.host;
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(options, resolve);
      req.on('error', (error) =>
        reject(
          signal.aborted ? signal.reason : networkError(target.host, error),
        ),
      );
      req.end(body);
    });
  }
}

/** The body as the server meant it: gzip, deflate and br are undone (the byte caps count decoded bytes). */
function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  if (!decoder) return response;
  response.on('error', (error) => decoder.destroy(error));
  // A connection cut mid-body must end the decoded stream too, or a reader would wait forever.
  response.on('close', () => {
    if (!response.complete)
      decoder.destroy(
        new UrlFetchError(
          'The connection closed before the response was complete',
        ),
      );
  });
  decoder.on('close', () => response.destroy());
  return response.pipe(decoder);
}

function networkError(host: string, error: Error): UrlFetchError {
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code)
  )
    return new UrlFetchError(
      `The TLS certificate of ${host} was not accepted (${code})`,
    );
  return new UrlFetchError(
    `Could not connect to ${host} (${typeof code === 'string' ? code : error.message})`,
  );
}

function refusalHint(host: string, port: number): string {
  return `only public addresses can be fetched; the owner can allow ${hostPort(host, port)} on the Tools page`;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
