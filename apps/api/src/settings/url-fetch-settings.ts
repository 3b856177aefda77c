import type {
  AuthProfile,
  AuthProfileInput,
  UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import { normaliseHostPort } from '../url-fetch/address-guard';
import { isForbiddenProfileHeader } from '../url-fetch/request-headers';
import { isMaskedSecret, maskSecret } from './secret-mask';

/** An auth profile with its value in clear: for `url_fetch` only, never for a response. */
export interface StoredAuthProfile {
  id: string;
  urlPrefix: string;
  header: string;
  value: string;
}

export interface UrlFetchSettings {
  urlFetchAllowHosts: string[];
  authProfiles: StoredAuthProfile[];
}

export const URL_FETCH_ALLOW_HOSTS_MAX = 50;
export const AUTH_PROFILES_MAX = 20;

/** The `url_fetch` fields of a PATCH applied to `current`; problems are pushed as sentences. */
export function nextUrlFetchSettings(
  request: Pick<
    UpdateAppSettingsRequest,
    'urlFetchAllowHosts' | 'authProfiles'
  >,
  current: UrlFetchSettings,
  problems: string[],
): UrlFetchSettings {
  const next: UrlFetchSettings = {
    urlFetchAllowHosts: current.urlFetchAllowHosts,
    authProfiles: current.authProfiles,
  };
  if (request.urlFetchAllowHosts !== undefined) {
    const hosts: string[] = [];
    request.urlFetchAllowHosts.forEach((entry, i) => {
      const normal = normaliseHostPort(entry);
      if (!normal)
        problems.push(
          `urlFetchAllowHosts[${i}] must be host:port, like nas.local:8123 or [fd00::7]:80 (got "${entry}")`,
        );
      else if (!hosts.includes(normal)) hosts.push(normal);
    });
    next.urlFetchAllowHosts = hosts;
  }
  if (request.authProfiles !== undefined) {
    const ids = new Set<string>();
    next.authProfiles = request.authProfiles.flatMap((input, i) => {
      const field = `authProfiles[${i}]`;
      if (ids.has(input.id))
        problems.push(
          `authProfiles has two profiles with the id '${input.id}'`,
        );
      ids.add(input.id);
      const urlPrefix = normalPrefix(input.urlPrefix);
      if (!urlPrefix) {
        problems.push(
          `${field}.urlPrefix must be an http(s) URL without credentials, like https://api.example.com/ (got "${input.urlPrefix}")`,
        );
        return [];
      }
      if (isForbiddenProfileHeader(input.header))
        problems.push(
          `${field}.header must be a header name such as Authorization or X-Api-Key (got "${input.header}")`,
        );
      const value = profileValue(
        input,
        urlPrefix,
        current.authProfiles.find((p) => p.id === input.id),
        field,
      );
      if (typeof value !== 'object') {
        problems.push(value);
        return [];
      }
      return [
        { id: input.id, urlPrefix, header: input.header, value: value.value },
      ];
    });
  }
  return next;
}

/** The value a profile keeps or gets; a sentence when it cannot have one. */
function profileValue(
  input: AuthProfileInput,
  urlPrefix: string,
  stored: StoredAuthProfile | undefined,
  field: string,
): { value: string } | string {
  const raw = input.value?.trim();
  if (raw && !isMaskedSecret(raw)) {
    if (/[\r\n\0]/.test(raw))
      return `${field}.value must not contain line breaks or NUL`;
    return { value: raw };
  }
  if (!stored)
    return `${field}.value is required for a new profile (a masked value keeps nothing)`;
  // Bound to the prefix and header it was entered for: never sent to another address, nor in another header
  // (where a server could echo or log it), without the owner re-entering it.
  if (stored.urlPrefix !== urlPrefix)
    return `${field}.value must be sent again because urlPrefix changed (from ${stored.urlPrefix} to ${urlPrefix})`;
  if (stored.header.toLowerCase() !== input.header.trim().toLowerCase())
    return `${field}.value must be sent again because the header changed (from ${stored.header} to ${input.header.trim()}): a stored value is only sent in the header it was entered for`;
  if (raw && raw !== maskSecret(stored.value))
    return `${field}.value is a masked value that does not match the stored one; send the value itself`;
  return { value: stored.value };
}

/** `https://API.example.com` → `https://api.example.com/`; `null` when not an http(s) URL without credentials. */
function normalPrefix(input: string): string | null {
  try {
    const url = new URL(input.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.username || url.password) return null;
    url.hash = '';
    return url.href;
  } catch {
    return null;
  }
}

export function authProfilesView(profiles: StoredAuthProfile[]): AuthProfile[] {
  return profiles.map((p) => ({
    id: p.id,
    urlPrefix: p.urlPrefix,
    header: p.header,
    value: maskSecret(p.value),
  }));
}

/** Stored documents call the value `secret`, so the data browser and `db_query` mask it by name too. */
export function storedAuthProfiles(
  stored:
    | Array<{ id: string; urlPrefix: string; header: string; secret: string }>
    | undefined,
): StoredAuthProfile[] {
  return (stored ?? []).map((p) => ({
    id: p.id,
    urlPrefix: p.urlPrefix,
    header: p.header,
    value: p.secret,
  }));
}

export function authProfilesRecord(profiles: StoredAuthProfile[]) {
  return profiles.map((p) => ({
    id: p.id,
    urlPrefix: p.urlPrefix,
    header: p.header,
    secret: p.value,
  }));
}
