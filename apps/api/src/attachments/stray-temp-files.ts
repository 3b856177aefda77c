import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Files are written under a temporary name ending so, then renamed; a stored file never ends so. */
const TEMP_ENDINGS = ['.part', '.tmp'];

/**
 * Deletes the temporary files a crash or kill left in `dir` (a write cut off before its rename).
 * Call it at start, before the server takes requests: then no write is in progress. Returns the names deleted.
 */
export async function removeStrayTempFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const stray = entries
    .filter(
      (entry) =>
        entry.isFile() &&
        TEMP_ENDINGS.some((ending) => entry.name.endsWith(ending)),
    )
    .map((entry) => entry.name);
  for (const name of stray) await rm(join(dir, name), { force: true });
  return stray;
}
