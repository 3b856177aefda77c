// Loaded with the first calendar call, not at boot.
import type { DAVClient } from 'tsdav';
import { AccountAddressRefused, checkServerHost } from './account-address';
import { guardedCalDavFetch } from './caldav-fetch';
import { maskSecrets } from './secret-text';

export interface CalDavLogin {
  url: string;
  user: string;
  password: string;
}

/** A problem reaching or logging in to a CalDAV server, in words for the owner (never holding the password). */
export class CalDavConnectionError extends Error {}

/** Logs in to the CalDAV server (principal and calendar home discovery); throws a CalDavConnectionError. */
export async function openCalDav(login: CalDavLogin): Promise<DAVClient> {
  try {
    // Checked here too, for a clear answer: tsdav's discovery swallows a first refusal.
    await checkServerHost(new URL(login.url).hostname, 'CalDAV server');
  } catch (error) {
    throw new CalDavConnectionError(
      describeCalDavError(
        login,
        new TypeError('fetch failed', { cause: error }),
      ),
    );
  }
  const tsdav = await import('tsdav');
  const client = new tsdav.DAVClient({
    serverUrl: login.url,
    credentials: { username: login.user, password: login.password },
    authMethod: 'Basic',
    defaultAccountType: 'caldav',
    // Every request (discovery, redirects, principal and calendar URLs on other hosts) goes through the address guard.
    fetch: guardedCalDavFetch,
  });
  try {
    await client.login();
    return client;
  } catch (error) {
    throw new CalDavConnectionError(describeCalDavError(login, error));
  }
}

export function describeCalDavError(
  login: Pick<CalDavLogin, 'url' | 'user'> &
    Partial<Pick<CalDavLogin, 'password'>>,
  error: unknown,
): string {
  const refused = addressRefusal(error);
  if (refused) return refused.message;
  const e = (error ?? {}) as {
    message?: string;
    cause?: { code?: string; message?: string };
  };
  // The server's and library's own words lose any echo of the password.
  const message = maskSecrets(e.message ?? '', [login.password]);
  const cause = maskSecrets(e.cause?.code ?? e.cause?.message ?? '', [
    login.password,
  ]);
  let host = login.url;
  try {
    host = new URL(login.url).host;
  } catch {
    /* keep the URL as given */
  }
  if (/401|Invalid credentials|Unauthorized/i.test(message))
    return `CalDAV login failed for '${login.user}' at ${host}: wrong user name or password.`;
  if (/403|Forbidden/i.test(message))
    return `The CalDAV server at ${host} refused access for '${login.user}'.`;
  if (/ECONNREFUSED/.test(cause))
    return `Cannot reach the CalDAV server at ${host}: connection refused.`;
  if (/ENOTFOUND|EAI_AGAIN/.test(cause))
    return `Cannot reach the CalDAV server at ${host}: unknown host.`;
  if (/fetch failed/i.test(message))
    return `Cannot reach the CalDAV server at ${host}${cause ? ` (${cause})` : ''}.`;
  if (/homeUrl|principal|calendar home/i.test(message))
    return `No calendars were found at ${login.url}: is it the CalDAV URL of this provider?`;
  return `The CalDAV server at ${host} failed: ${message || 'unknown error'}.`;
}

/** The guard's refusal, also when a library wrapped it as the cause of its own error. */
function addressRefusal(error: unknown): AccountAddressRefused | null {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof AccountAddressRefused) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
