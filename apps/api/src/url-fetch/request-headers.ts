/** The request headers the model may set on `url_fetch`; anything else is refused. */
export const URL_FETCH_ALLOWED_HEADERS = [
  'Accept',
  'Content-Type',
  'User-Agent',
  'If-None-Match',
  'If-Modified-Since',
  'Range',
] as const;

const ALLOWED = new Map(
  URL_FETCH_ALLOWED_HEADERS.map((name) => [name.toLowerCase(), name]),
);

/** Headers that carry or impersonate credentials or routing: refused with a pointer to auth profiles. */
function isCredentialHeader(lower: string): boolean {
  return (
    lower === 'authorization' ||
    lower === 'cookie' ||
    lower === 'host' ||
    lower.startsWith('proxy-') ||
    lower.startsWith('x-forwarded-') ||
    lower === 'forwarded' ||
    /key|token|secret|auth|session|password|cookie/.test(lower)
  );
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_VALUE_LENGTH = 2000;

/**
 * Checks the model's headers against the allow-list; returns them with canonical
 * names, or the first problem as a sentence for the model.
 */
export function checkRequestHeaders(
  headers: Record<string, string> | undefined,
):
  | { ok: true; headers: Record<string, string> }
  | { ok: false; error: string } {
  const out: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers ?? {})) {
    const name = rawName.trim();
    const lower = name.toLowerCase();
    if (!TOKEN.test(name))
      return { ok: false, error: `'${name}' is not a valid header name` };
    if (isCredentialHeader(lower))
      return {
        ok: false,
        error: `Header '${name}' is refused: credentials are never set by the model; use auth_profile with a profile the owner set up`,
      };
    const canonical = ALLOWED.get(lower);
    if (!canonical)
      return {
        ok: false,
        error: `Header '${name}' is not allowed; allowed headers: ${URL_FETCH_ALLOWED_HEADERS.join(', ')}`,
      };
    if (/[\r\n\0]/.test(value))
      return {
        ok: false,
        error: `Header '${name}' must not contain line breaks or NUL`,
      };
    if (value.length > MAX_VALUE_LENGTH)
      return {
        ok: false,
        error: `Header '${name}' is longer than ${MAX_VALUE_LENGTH} characters`,
      };
    out[canonical] = value.trim();
  }
  return { ok: true, headers: out };
}

/** Names an auth profile may not set: the connection's own framing and routing. */
export function isForbiddenProfileHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    !TOKEN.test(name) ||
    [
      'host',
      'content-length',
      'transfer-encoding',
      'connection',
      'upgrade',
      'te',
      'trailer',
      'keep-alive',
      'expect',
    ].includes(lower) ||
    lower.startsWith('proxy-')
  );
}
