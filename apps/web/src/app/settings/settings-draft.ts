import {
  SECRET_MASK_PREFIX,
  type AppSettingsView,
  type UpdateAppSettingsRequest,
} from '@metatronos/shared-types';

/** A secret being edited: a new value typed (empty = keep the saved one), or marked for removal. */
export interface SecretDraft {
  value: string;
  remove: boolean;
}

export const UNCHANGED_SECRET: SecretDraft = { value: '', remove: false };

export interface EndpointDraft {
  /** Stable identity for the template. */
  key: number;
  name: string;
  baseUrl: string;
  /** The masked key the server returned for this row, null for a new row or one without a key. */
  savedKey: string | null;
  /** The row's name as saved; the server finds a kept key by name. */
  savedName: string | null;
  /** The row's base URL as saved: the server sends a kept key only to that address. */
  savedBaseUrl: string | null;
  apiKey: SecretDraft;
}

/** The whole settings form. */
export interface SettingsDraft {
  geminiApiKey: SecretDraft;
  openaiApiKey: SecretDraft;
  braveApiKey: SecretDraft;
  openaiCompatible: EndpointDraft[];
  primaryModel: string;
  imageModel: string;
  timezone: string;
  /** Attended turns too wait for approval before sending or deleting; null: the server has no such setting. */
  alwaysConfirm: boolean | null;
}

let nextEndpointKey = 1;

export function newEndpointDraft(): EndpointDraft {
  return {
    key: nextEndpointKey++,
    name: '',
    baseUrl: '',
    savedKey: null,
    savedName: null,
    savedBaseUrl: null,
    apiKey: UNCHANGED_SECRET,
  };
}

/** The form as the server's settings fill it: every secret unchanged. */
export function draftFrom(settings: AppSettingsView): SettingsDraft {
  return {
    geminiApiKey: UNCHANGED_SECRET,
    openaiApiKey: UNCHANGED_SECRET,
    braveApiKey: UNCHANGED_SECRET,
    openaiCompatible: settings.openaiCompatible.map((endpoint) => ({
      key: nextEndpointKey++,
      name: endpoint.name,
      baseUrl: endpoint.baseUrl,
      savedKey: endpoint.apiKey,
      savedName: endpoint.name,
      savedBaseUrl: endpoint.baseUrl,
      apiKey: UNCHANGED_SECRET,
    })),
    primaryModel: settings.primaryModel ?? '',
    imageModel: settings.imageModel ?? '',
    timezone: settings.timezone,
    alwaysConfirm: settings.alwaysConfirm ?? null,
  };
}

/** A masked value typed or pasted back into a field means "unchanged", never a new secret. */
function isMasked(value: string): boolean {
  return value.startsWith(SECRET_MASK_PREFIX);
}

/** What a secret field sends: `null` to remove, a new value, or undefined to leave it alone. */
export function secretChange(
  draft: SecretDraft,
  saved: string | null,
): string | null | undefined {
  if (draft.remove) return saved === null ? undefined : null;
  const value = draft.value.trim();
  if (!value || isMasked(value)) return undefined;
  return value;
}

type EndpointRequest = NonNullable<
  UpdateAppSettingsRequest['openaiCompatible']
>[number];

function endpointRequest(row: EndpointDraft): EndpointRequest {
  const change = secretChange(row.apiKey, row.savedKey);
  // Unchanged: the masked value as GET returned it keeps the stored key (the contract's rule for secrets).
  const apiKey = change === undefined ? row.savedKey : change;
  return { name: row.name.trim(), baseUrl: row.baseUrl.trim(), apiKey };
}

function sameEndpoints(
  rows: EndpointRequest[],
  saved: AppSettingsView['openaiCompatible'],
): boolean {
  return (
    rows.length === saved.length &&
    rows.every(
      (row, i) =>
        row.name === saved[i].name &&
        row.baseUrl === saved[i].baseUrl &&
        (row.apiKey ?? null) === saved[i].apiKey,
    )
  );
}

/** The PATCH body: only the fields that differ from what the server has. Empty when nothing changed. */
export function settingsChanges(
  saved: AppSettingsView,
  draft: SettingsDraft,
): UpdateAppSettingsRequest {
  const changes: UpdateAppSettingsRequest = {};
  for (const field of [
    'geminiApiKey',
    'openaiApiKey',
    'braveApiKey',
  ] as const) {
    const change = secretChange(draft[field], saved[field]);
    if (change !== undefined) changes[field] = change;
  }

  const endpoints = draft.openaiCompatible.map(endpointRequest);
  if (!sameEndpoints(endpoints, saved.openaiCompatible))
    changes.openaiCompatible = endpoints;

  const primaryModel = draft.primaryModel.trim() || null;
  if (primaryModel !== saved.primaryModel) changes.primaryModel = primaryModel;
  const imageModel = draft.imageModel.trim() || null;
  if (imageModel !== saved.imageModel) changes.imageModel = imageModel;
  const timezone = draft.timezone.trim();
  if (timezone && timezone !== saved.timezone) changes.timezone = timezone;
  if (
    draft.alwaysConfirm !== null &&
    saved.alwaysConfirm !== undefined &&
    draft.alwaysConfirm !== saved.alwaysConfirm
  )
    changes.alwaysConfirm = draft.alwaysConfirm;
  return changes;
}

export const ENDPOINT_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Problems the owner can fix before saving, by row: `name` / `baseUrl` messages. */
export function endpointErrors(
  rows: EndpointDraft[],
): Map<number, { name?: string; baseUrl?: string }> {
  const errors = new Map<number, { name?: string; baseUrl?: string }>();
  const seen = new Set<string>();
  for (const row of rows) {
    const name = row.name.trim();
    const baseUrl = row.baseUrl.trim();
    const rowErrors: { name?: string; baseUrl?: string } = {};
    if (!name) rowErrors.name = 'Enter a name.';
    else if (!ENDPOINT_NAME_PATTERN.test(name))
      rowErrors.name = 'Letters, digits, - and _ only.';
    else if (seen.has(name)) rowErrors.name = 'Another endpoint has this name.';
    seen.add(name);
    if (!baseUrl) rowErrors.baseUrl = 'Enter the base URL.';
    else if (!/^https?:\/\/[^\s/]+/i.test(baseUrl))
      rowErrors.baseUrl =
        'An http:// or https:// URL, e.g. http://127.0.0.1:11434/v1';
    if (rowErrors.name || rowErrors.baseUrl) errors.set(row.key, rowErrors);
  }
  return errors;
}

/** Which provider a model id goes to, and what it needs; null when the id is fine (or empty). */
export function modelWarning(
  model: string,
  has: { gemini: boolean; openai: boolean; endpoints: string[] },
): string | null {
  const id = model.trim();
  if (!id) return null;
  const slash = id.indexOf('/');
  if (slash > 0) {
    const endpoint = id.slice(0, slash);
    return has.endpoints.includes(endpoint)
      ? null
      : `No OpenAI-compatible endpoint is named “${endpoint}”.`;
  }
  if (/^gemini-/i.test(id))
    return has.gemini ? null : 'Gemini models need a Gemini API key.';
  if (/^(gpt-|o\d)/i.test(id))
    return has.openai ? null : 'OpenAI models need an OpenAI API key.';
  return 'Unknown model id: use gemini-…, gpt-… / o…, or <endpoint>/<model>.';
}

/** A renamed endpoint whose saved key was not re-entered: the server keeps keys by name, so it would be lost. */
export function losesKeyOnRename(row: EndpointDraft): boolean {
  return (
    row.savedKey !== null &&
    row.savedName !== null &&
    row.name.trim() !== row.savedName &&
    secretChange(row.apiKey, row.savedKey) === undefined
  );
}

/**
 * Whether two base URLs are the same address for the server (which keeps a key
 * only while it is): letter case of scheme and host, a default port and
 * trailing slashes do not count; anything else (host, port, scheme, path,
 * credentials, query) does.
 */
export function sameEndpointAddress(a: string, b: string): boolean {
  const normal = (url: string): string => {
    try {
      const parsed = new URL(url);
      parsed.pathname = parsed.pathname.replace(/\/+$/, '');
      return parsed.href.replace(/\/+$/, '');
    } catch {
      return url.replace(/\/+$/, '');
    }
  };
  return normal(a.trim()) === normal(b.trim());
}

/**
 * An endpoint keeping its name but pointing at another address, its saved key
 * not entered again: the server refuses to send the stored key to the new
 * address, so saving fails until the key is entered (or removed).
 */
export function needsKeyForNewBaseUrl(row: EndpointDraft): boolean {
  return (
    row.savedKey !== null &&
    row.savedName !== null &&
    row.savedBaseUrl !== null &&
    row.name.trim() === row.savedName &&
    row.baseUrl.trim() !== '' &&
    !sameEndpointAddress(row.baseUrl, row.savedBaseUrl) &&
    secretChange(row.apiKey, row.savedKey) === undefined
  );
}
