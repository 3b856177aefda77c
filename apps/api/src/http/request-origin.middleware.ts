import type { NextFunction, Request, Response } from 'express';
import { API_PREFIX } from './api-prefix';

/** Methods that only read; every other method may change state. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What a browser says about a request it made from this console's own page (or typed by the owner). */
const SAME_ORIGIN_FETCH_SITES = new Set(['same-origin', 'none']);
/** The routes that take a multipart body (the attachment upload, a backup to restore). */
const UPLOAD_PATHS = new Set([
  `/${API_PREFIX}/attachments`,
  `/${API_PREFIX}/backup/restore`,
]);
/** A backup to restore may also come as the raw archive (types a cross-site form cannot send). */
const RAW_ARCHIVE_PATH = `/${API_PREFIX}/backup/restore`;
const RAW_ARCHIVE_TYPES = new Set([
  'application/gzip',
  'application/x-gzip',
  'application/octet-stream',
]);

export interface RequestOriginPolicy {
  /** Host names the app answers to (ALLOWED_HOSTS + loopback names); `null` = any (then only the request's own Host counts). */
  allowedHosts: string[] | null;
  /** Extra origins (`https://metatron.example`) trusted to send state-changing requests, e.g. a reverse proxy's. */
  trustedOrigins: string[];
}

export type OriginDecision =
  | { allowed: true }
  | { allowed: false; status: 403 | 415; message: string };

export interface RequestFacts {
  method: string;
  /** Path without the query string. */
  path: string;
  /** `http` or `https`: the scheme this server was reached with. */
  protocol: string;
  host: string | undefined;
  origin: string | undefined;
  secFetchSite: string | undefined;
  contentType: string | undefined;
  /** Whether the request carries a body (Content-Length > 0 or a Transfer-Encoding). */
  hasBody: boolean;
}

/**
 * Cross-site request forgery guard for state-changing requests (everything but
 * GET, HEAD and OPTIONS). SameSite=Strict cookies do not stop a page on another
 * port of the same host, and a form or a no-cors fetch needs no CORS consent, so:
 * - a browser request must come from the console's own origin (or a TRUSTED_ORIGINS
 *   entry): `Origin` must match and `Sec-Fetch-Site` must be same-origin (or none);
 * - the body must be JSON (multipart only on the upload route): the types a form
 *   or a no-cors fetch can send, and bodies without a type, get 415.
 * Requests with neither `Origin` nor `Sec-Fetch-Site` (curl, scripts) are not
 * from a browser page and pass the origin check.
 */
export function decideRequestOrigin(
  req: RequestFacts,
  policy: RequestOriginPolicy,
): OriginDecision {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return { allowed: true };

  const origin = req.origin?.trim();
  const fetchSite = req.secFetchSite?.trim().toLowerCase();
  const trusted = origin !== undefined && isTrustedOrigin(origin, policy);
  const own = origin !== undefined && isOwnOrigin(origin, req, policy);
  if (origin !== undefined && !own && !trusted) {
    return forbidden(
      `Cross-origin request refused: origin "${shown(origin)}" is not this console's origin. ` +
        'If a reverse proxy serves the console there, add it to TRUSTED_ORIGINS.',
    );
  }
  // A listed origin may be another site on purpose; for every other request the browser must call it same-origin.
  if (
    fetchSite !== undefined &&
    !SAME_ORIGIN_FETCH_SITES.has(fetchSite) &&
    !(trusted && !own)
  ) {
    return forbidden(
      `Cross-site request refused (Sec-Fetch-Site: ${shown(fetchSite)}).`,
    );
  }

  const type = mediaType(req.contentType);
  if (type === 'application/json') return { allowed: true };
  if (type === 'multipart/form-data' && isUploadRoute(req))
    return { allowed: true };
  if (type && RAW_ARCHIVE_TYPES.has(type) && postPath(req) === RAW_ARCHIVE_PATH)
    return { allowed: true };
  if (type === undefined && !req.hasBody) return { allowed: true };
  return {
    allowed: false,
    status: 415,
    message:
      type === undefined
        ? 'A request body needs Content-Type: application/json.'
        : `Content-Type "${shown(type)}" is not accepted here; send application/json` +
          (isUploadRoute(req) ? ' or multipart/form-data.' : '.'),
  };
}

/** Express middleware applying `decideRequestOrigin`; answers 403/415 in the API's error shape. */
export function requestOriginGuard(policy: RequestOriginPolicy) {
  return (req: Request, res: Response, next: NextFunction): void => {
    // The decision for a read is "allowed" whatever the rest says: the facts (path, scheme) are not gathered for it.
    if (SAFE_METHODS.has(req.method.toUpperCase())) {
      next();
      return;
    }
    const facts: RequestFacts = {
      method: req.method,
      path: req.path,
      protocol: req.protocol,
      host: req.headers.host,
      origin: req.headers.origin,
      secFetchSite: header(req.headers['sec-fetch-site']),
      contentType: req.headers['content-type'],
      hasBody:
        Number(req.headers['content-length'] ?? 0) > 0 ||
        req.headers['transfer-encoding'] !== undefined,
    };
    const decision = decideRequestOrigin(facts, policy);
    if (decision.allowed) {
      next();
      return;
    }
    // The body is never read: close the connection rather than drain an unwanted upload.
    if (facts.hasBody) res.setHeader('Connection', 'close');
    res.status(decision.status).json({
      statusCode: decision.status,
      message: decision.message,
      error: decision.status === 403 ? 'Forbidden' : 'Unsupported Media Type',
    });
  };
}

/** `Text/Plain; charset=utf-8` → `text/plain`; undefined when absent or empty. */
export function mediaType(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return type ? type : undefined;
}

/**
 * `http://localhost:3000` is the own origin of a request to `127.0.0.1:3000`:
 * same scheme and port as the request, and a host name the app answers to.
 */
export function isOwnOrigin(
  origin: string,
  req: RequestFacts,
  policy: RequestOriginPolicy,
): boolean {
  const parsed = parseOrigin(origin);
  const self = parseOrigin(`${req.protocol}://${req.host ?? ''}`);
  if (!parsed || !self) return false;
  if (parsed.protocol !== self.protocol || parsed.port !== self.port)
    return false;
  if (parsed.hostname === self.hostname) return true;
  return (
    policy.allowedHosts !== null &&
    policy.allowedHosts.includes(unbracket(parsed.hostname))
  );
}

export function isTrustedOrigin(
  origin: string,
  policy: RequestOriginPolicy,
): boolean {
  const parsed = parseOrigin(origin);
  return !!parsed && policy.trustedOrigins.includes(parsed.origin);
}

/** A serialized origin (`scheme://host[:port]`, nothing else); `null` and anything with a path are not one. */
function parseOrigin(value: string): URL | null {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(value)) return null;
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

function isUploadRoute(req: RequestFacts): boolean {
  return UPLOAD_PATHS.has(postPath(req) ?? '');
}

/** The path of a POST as Express matches it (case-insensitively, optional trailing slash). */
function postPath(req: RequestFacts): string | null {
  return req.method.toUpperCase() === 'POST'
    ? req.path.toLowerCase().replace(/\/$/, '')
    : null;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** A header value quoted in an error message: printable ASCII, bounded. */
function shown(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 100 ? `${printable.slice(0, 100)}…` : printable;
}

function forbidden(message: string): OriginDecision {
  return { allowed: false, status: 403, message };
}
