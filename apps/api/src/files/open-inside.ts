import { constants } from 'node:fs';
import { open, readlink, type FileHandle } from 'node:fs/promises';
import { sep } from 'node:path';
import type { FileDirs, ResolvedFilePath } from './file-dirs';

/** The path changed into a link, or now leads out of its dir, since it was resolved. */
export class FileMovedOutError extends Error {}

/**
 * Opens a path `FileDirs.resolve` checked, without trusting that it is still the
 * same file: a link put in its place since (by the bash sandbox, in a race) is
 * not followed (`O_NOFOLLOW`), and the opened file's real path is checked once
 * more through `/proc/self/fd` (where the system has it).
 */
export async function openInside(
  dirs: FileDirs,
  file: ResolvedFilePath,
  flags = constants.O_RDONLY,
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file.absolute, flags | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new FileMovedOutError(
        `${file.display} is a link now; it was not opened`,
      );
    throw error;
  }
  const dir = dirs.ensure()[file.alias];
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
  if (real !== null && real !== dir && !real.startsWith(dir + sep)) {
    await handle.close();
    throw new FileMovedOutError(
      `${file.display} leads out of ${file.alias} now; it was not opened`,
    );
  }
  return handle;
}
