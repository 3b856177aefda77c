import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HIDDEN_COLLECTION_PREFIX } from '../mongo-sandbox/collection-access';

/**
 * A restore's journal: the one file that says, after a crash, whether the next
 * start rolls the restore back (`staging`: the new data is not complete, the live
 * data was never touched) or finishes it (`committed`: the new data is complete
 * in staging collections and folders, and the switch is replayed). Written with
 * fsync and rename, so it is either the old or the new version, never half.
 */
export interface RestoreJournal {
  version: 1;
  phase: 'staging' | 'committed';
  /** The restore's work folder (the upload, the unpacked archive, the folders switched out). */
  work: string;
  /** The uploaded archive; kept until the restore is committed and done. */
  archive: string;
  /** Collections whose staging copy replaces the live one. */
  switch: string[];
  /** Live collections the restore removes (replace mode: `ai_*` not in the archive). */
  drop: string[];
  /** Data folders swapped: the unpacked one replaces the live one. */
  dirs: Array<{ incoming: string; target: string; previous: string }>;
  startedAt: string;
}

/** Hidden from the AI and from backups (the `auth_` prefix), and never a name the app uses. */
export const STAGING_PREFIX = `${HIDDEN_COLLECTION_PREFIX}restore_staging__`;
export const PREVIOUS_PREFIX = `${HIDDEN_COLLECTION_PREFIX}restore_previous__`;

export async function writeJournal(
  file: string,
  journal: RestoreJournal,
): Promise<void> {
  const temp = `${file}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(journal, null, 2));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await syncDir(dirname(file));
}

export async function readJournal(
  file: string,
): Promise<RestoreJournal | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const journal = JSON.parse(text) as RestoreJournal;
  if (
    journal?.version !== 1 ||
    (journal.phase !== 'staging' && journal.phase !== 'committed') ||
    !Array.isArray(journal.switch) ||
    !Array.isArray(journal.drop) ||
    !Array.isArray(journal.dirs)
  )
    throw new Error(`${file} is not a restore journal this version can read`);
  return journal;
}

export async function removeJournal(file: string): Promise<void> {
  await rm(`${file}.tmp`, { force: true });
  await rm(file, { force: true });
  await syncDir(dirname(file));
}

/** Makes a rename or delete in this folder durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
