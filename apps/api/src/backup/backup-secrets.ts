import {
  createCipheriv,
  createDecipheriv,
  randomBytes,
  scrypt,
  type ScryptOptions,
} from 'node:crypto';
import type {
  BackupSecretsEntry,
  SealedBackupSecrets,
} from '@metatronos/shared-types';
import type { mongo } from 'mongoose';
import { sameEndpointAddress } from '../settings/settings.service';
import { APP_SETTINGS_ID } from '../settings/schemas/app-settings.schema';
import { BackupArchiveError } from './backup-archive';

/**
 * The secrets of the settings document (API keys, the Telegram token, endpoint
 * keys, auth profile values), which a backup never holds in clear: left out, or
 * sealed with the owner's passphrase (scrypt → AES-256-GCM, parameters stored
 * with the ciphertext so they can change in a later version).
 */
export interface SettingsSecrets {
  fields: Partial<Record<(typeof TOP_LEVEL)[number], string | null>>;
  endpoints: Array<{ name: string; baseUrl: string; apiKey: string | null }>;
  authProfiles: Array<{
    id: string;
    urlPrefix: string;
    header: string;
    secret: string;
  }>;
  /** MCP servers' header and environment values (`mcp_servers`), by server; absent in archives made before. */
  mcpServers?: McpServerSecrets[];
}

/** One MCP server's secret values, and where they were entered for. */
export interface McpServerSecrets {
  name: string;
  url: string | null;
  command: string | null;
  env: Record<string, string>;
  headers: Record<string, string>;
}

const TOP_LEVEL = [
  'geminiApiKey',
  'openaiApiKey',
  'braveApiKey',
  'telegramBotToken',
] as const;

export const SECRETS_SCHEME = 'scrypt-aes-256-gcm';
export const MIN_PASSPHRASE_LENGTH = 8;
const AAD = Buffer.from('metatronos-backup-secrets/1');
/** scrypt cost: about 32 MB and a tenth of a second; an archive may not ask for much more. */
const KDF = { N: 2 ** 15, r: 8, p: 1 };
const MAX_KDF = { N: 2 ** 20, r: 16, p: 4 };

export class WrongPassphraseError extends Error {}

const isSettingsDoc = (doc: mongo.BSON.Document) =>
  doc['_id'] === APP_SETTINGS_ID;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The settings document without its secrets (kept in the schema's shape), and the secrets. */
export function extractSecrets(doc: mongo.BSON.Document): {
  doc: mongo.BSON.Document;
  secrets: SettingsSecrets;
} {
  const copy: mongo.BSON.Document = { ...doc };
  const secrets: SettingsSecrets = {
    fields: {},
    endpoints: [],
    authProfiles: [],
  };
  for (const field of TOP_LEVEL) {
    secrets.fields[field] = text(doc[field]);
    if (field in copy) copy[field] = null;
  }
  if (Array.isArray(doc['openaiCompatible']))
    copy['openaiCompatible'] = (doc['openaiCompatible'] as unknown[]).map(
      (e) => {
        if (!e || typeof e !== 'object') return e;
        const endpoint = e as Record<string, unknown>;
        secrets.endpoints.push({
          name: String(endpoint['name']),
          baseUrl: String(endpoint['baseUrl']),
          apiKey: text(endpoint['apiKey']),
        });
        return { ...endpoint, apiKey: null };
      },
    );
  if (Array.isArray(doc['authProfiles']))
    copy['authProfiles'] = (doc['authProfiles'] as unknown[]).map((p) => {
      if (!p || typeof p !== 'object') return p;
      const profile = p as Record<string, unknown>;
      secrets.authProfiles.push({
        id: String(profile['id']),
        urlPrefix: String(profile['urlPrefix']),
        header: String(profile['header']),
        secret: String(profile['secret'] ?? ''),
      });
      // Required by the schema: an empty value, filled again at restore.
      return { ...profile, secret: '' };
    });
  return { doc: copy, secrets };
}

/**
 * The restored settings document with these secrets put in: the top-level ones
 * as they are, an endpoint's key only for the same name and address, an auth
 * profile's value only for the same id, prefix and header (a key never goes to
 * an address it was not entered for).
 */
export function applySecrets(
  doc: mongo.BSON.Document,
  secrets: SettingsSecrets,
): mongo.BSON.Document {
  const copy: mongo.BSON.Document = { ...doc };
  for (const field of TOP_LEVEL) copy[field] = secrets.fields[field] ?? null;
  if (Array.isArray(doc['openaiCompatible']))
    copy['openaiCompatible'] = (
      doc['openaiCompatible'] as Array<Record<string, unknown>>
    ).map((endpoint) => {
      const match = secrets.endpoints.find(
        (s) =>
          s.name === endpoint['name'] &&
          typeof endpoint['baseUrl'] === 'string' &&
          sameEndpointAddress(s.baseUrl, endpoint['baseUrl']),
      );
      return { ...endpoint, apiKey: match?.apiKey ?? null };
    });
  if (Array.isArray(doc['authProfiles']))
    copy['authProfiles'] = (
      doc['authProfiles'] as Array<Record<string, unknown>>
    ).map((profile) => {
      const match = secrets.authProfiles.find(
        (s) =>
          s.id === profile['id'] &&
          s.urlPrefix === profile['urlPrefix'] &&
          s.header === profile['header'],
      );
      return { ...profile, secret: match?.secret ?? '' };
    });
  return copy;
}

export { isSettingsDoc };

/** The collection whose documents carry MCP servers' header and environment values. */
export const MCP_SERVERS_COLLECTION_NAME = 'mcp_servers';

const stringMap = (v: unknown): Record<string, string> => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v as Record<string, unknown>))
    if (typeof value === 'string') out[key] = value;
  return out;
};

/** An MCP server's document without its header and environment values (left out of the archive), and those values. */
export function extractMcpServerSecrets(doc: mongo.BSON.Document): {
  doc: mongo.BSON.Document;
  secrets: McpServerSecrets;
} {
  return {
    doc: { ...doc, env: {}, headers: {} },
    secrets: {
      name: String(doc['name']),
      url: text(doc['url']),
      command: text(doc['command']),
      env: stringMap(doc['env']),
      headers: stringMap(doc['headers']),
    },
  };
}

/**
 * A restored MCP server's document with its values put back: only for a server of the same name and
 * the same address or command (a header never goes to an address it was not entered for); none otherwise.
 */
export function applyMcpServerSecrets(
  doc: mongo.BSON.Document,
  secrets: readonly McpServerSecrets[],
): mongo.BSON.Document {
  const match = secrets.find(
    (s) =>
      s.name === doc['name'] &&
      s.url === text(doc['url']) &&
      s.command === text(doc['command']),
  );
  return {
    ...doc,
    env: match ? { ...match.env } : {},
    headers: match ? { ...match.headers } : {},
  };
}

function deriveKey(
  passphrase: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
): Promise<Buffer> {
  const options: ScryptOptions = {
    ...params,
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) =>
    scrypt(passphrase.normalize('NFC'), salt, 32, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function sealSecrets(
  secrets: SettingsSecrets,
  passphrase: string,
): Promise<SealedBackupSecrets> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await deriveKey(passphrase, salt, KDF);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const data = Buffer.concat([
    cipher.update(JSON.stringify(secrets), 'utf8'),
    cipher.final(),
  ]);
  return {
    included: true,
    scheme: SECRETS_SCHEME,
    version: 1,
    kdf: { name: 'scrypt', ...KDF, salt: salt.toString('base64') },
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** The secrets of a sealed entry; WrongPassphraseError when the passphrase does not open them. */
export async function unsealSecrets(
  entry: BackupSecretsEntry,
  passphrase: string,
): Promise<SettingsSecrets> {
  if (!entry.included)
    throw new BackupArchiveError('its manifest.json says it holds no secrets');
  const { kdf } = entry;
  if (
    entry.scheme !== SECRETS_SCHEME ||
    entry.version !== 1 ||
    kdf?.name !== 'scrypt' ||
    ![kdf.N, kdf.r, kdf.p].every((n) => Number.isInteger(n) && n > 0) ||
    kdf.N > MAX_KDF.N ||
    (kdf.N & (kdf.N - 1)) !== 0 ||
    kdf.r > MAX_KDF.r ||
    kdf.p > MAX_KDF.p
  )
    throw new BackupArchiveError(
      'its secrets are sealed in a way this MetatronOS does not know',
    );
  const bytes = (v: unknown) =>
    typeof v === 'string' ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  const salt = bytes(kdf.salt);
  const iv = bytes(entry.iv);
  const tag = bytes(entry.tag);
  if (salt.length < 16 || iv.length !== 12 || tag.length !== 16)
    throw new BackupArchiveError('its sealed secrets are damaged');
  const key = await deriveKey(passphrase, salt, kdf);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(AAD);
  decipher.setAuthTag(tag);
  let plain: string;
  try {
    plain = Buffer.concat([
      decipher.update(bytes(entry.data)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new WrongPassphraseError();
  }
  const parsed = JSON.parse(plain) as SettingsSecrets;
  return {
    fields: parsed.fields ?? {},
    endpoints: Array.isArray(parsed.endpoints) ? parsed.endpoints : [],
    authProfiles: Array.isArray(parsed.authProfiles) ? parsed.authProfiles : [],
    mcpServers: Array.isArray(parsed.mcpServers)
      ? parsed.mcpServers.map((server) => ({
          name: String(server?.name),
          url: text(server?.url),
          command: text(server?.command),
          env: stringMap(server?.env),
          headers: stringMap(server?.headers),
        }))
      : [],
  };
}
