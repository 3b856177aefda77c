/** Backups: `GET /api/backup` (one .tar.gz) and `POST /api/backup/restore`. */

/** `manifest.json`'s `format`: an archive without it is not a MetatronOS backup. */
export const BACKUP_FORMAT = 'metatronos-backup';
export const BACKUP_FORMAT_VERSION = 1;

/** The data dirs a backup carries (under DATA_DIR), by their name in the archive. */
export const BACKUP_FILE_DIRS = ['media', 'attachments', 'files'] as const;
export type BackupFileDir = (typeof BACKUP_FILE_DIRS)[number];

export interface BackupCollectionEntry {
  name: string;
  /** Documents in `db/<name>.ejson` (one canonical Extended JSON document a line). */
  count: number;
  /** Index specs other than `_id_` (`{ key, name, unique?, … }`), recreated on restore. */
  indexes: Record<string, unknown>[];
}

export interface BackupFileDirEntry {
  name: BackupFileDir;
  files: number;
  bytes: number;
  /**
   * `restored`: the backup's API keys and tokens are in use (sealed ones opened with the passphrase);
   * `kept`: the backup had none (or no passphrase was given), so this instance's own were kept.
   */
  secrets?: 'restored' | 'kept';
}

/** The settings' secrets sealed with the owner's passphrase (scrypt → AES-256-GCM). */
export interface SealedBackupSecrets {
  included: true;
  scheme: 'scrypt-aes-256-gcm';
  version: 1;
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string };
  /** Base64. */
  iv: string;
  tag: string;
  data: string;
}

/** `included: false`: the archive holds no secrets (made without a passphrase). */
export type BackupSecretsEntry = { included: false } | SealedBackupSecrets;

/** `manifest.json` at the root of a backup archive. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  appVersion: string;
  createdAt: string;
  collections: BackupCollectionEntry[];
  dirs: BackupFileDirEntry[];
  /** Missing in backups made before secrets were left out: those hold them in clear. */
  secrets?: BackupSecretsEntry;
}

/** `POST /api/backup/restore` answer. */
export interface RestoreResult {
  restored: true;
  appVersion: string;
  createdAt: string;
  collections: { name: string; count: number }[];
  files: number;
  bytes: number;
  /**
   * `restored`: the backup's API keys and tokens are in use (sealed ones opened with the passphrase);
   * `kept`: the backup had none (or no passphrase was given), so this instance's own were kept.
   */
  secrets?: 'restored' | 'kept';
}
