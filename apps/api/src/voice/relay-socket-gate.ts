import type { IncomingMessage } from 'node:http';
import { SESSION_COOKIE } from '../auth/session-cookie';
import { API_PREFIX } from '../http/api-prefix';
import { hostnameOf } from '../http/host-allowlist.middleware';
import {
  decideRequestOrigin,
  type RequestOriginPolicy,
} from '../http/request-origin.middleware';

/** `/api/voice/relay/<callId>`: the one WebSocket route of the app. */
const RELAY_PATH = new RegExp(
  `^/${API_PREFIX}/voice/relay/([A-Za-z0-9_-]{1,100})$`,
);

export function relaySocketPath(callId: string): string {
  return `/${API_PREFIX}/voice/relay/${callId}`;
}

export type RelayGateDecision =
  | { allowed: true; callId: string; sessionToken: string }
  | { allowed: false; status: 401 | 403 | 404 | 421; message: string };

/**
 * Who may open a call's audio socket, decided before the upgrade: the path names
 * a call, the host is one the app answers to, the browser's Origin is the
 * console's own (the same rule as a state-changing request: a WebSocket needs no
 * CORS consent, so a page on another port could otherwise open it with the
 * owner's cookie), and the owner's session cookie is there (checked by the caller).
 */
export function decideRelayUpgrade(
  req: Pick<IncomingMessage, 'url' | 'headers'>,
  encrypted: boolean,
  policy: RequestOriginPolicy,
): RelayGateDecision | null {
  const path = (req.url ?? '').split('?')[0];
  const match = RELAY_PATH.exec(path);
  if (!match) {
    if (path.startsWith(`/${API_PREFIX}/voice/relay`))
      return { allowed: false, status: 404, message: 'No such voice relay' };
    return null;
  }
  const host = req.headers.host;
  if (policy.allowedHosts && !policy.allowedHosts.includes(hostnameOf(host)))
    return {
      allowed: false,
      status: 421,
      message: `Host "${hostnameOf(host)}" is not allowed.`,
    };
  const origin = decideRequestOrigin(
    {
      method: 'POST',
      path,
      protocol: encrypted ? 'https' : 'http',
      host,
      origin: single(req.headers.origin),
      secFetchSite: single(req.headers['sec-fetch-site']),
      contentType: undefined,
      hasBody: false,
    },
    policy,
  );
  if (!origin.allowed)
    return { allowed: false, status: 403, message: origin.message };
  const token = cookieValue(req.headers.cookie, SESSION_COOKIE);
  if (!token)
    return {
      allowed: false,
      status: 401,
      message: 'Log in to MetatronOS first',
    };
  return { allowed: true, callId: match[1], sessionToken: token };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const raw = pair.slice(at + 1).trim();
    try {
      return decodeURIComponent(raw) || null;
    } catch {
      return null;
    }
  }
  return null;
}
