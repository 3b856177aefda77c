import { DAVClient } from 'tsdav';
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
  const client = new DAVClient({
    serverUrl: login.url,
    credentials: { username: login.user, password: login.password },
    authMethod: 'Basic',
    defaultAccountType: 'caldav',
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
