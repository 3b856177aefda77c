import { constants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { sep } from 'node:path';
import type { ResolvedFilePath } from './file-dirs';

/** A refusal the tool reports to the model as `{ "error": message }`. */
export class FileAccessError extends Error {}

export type OpenPurpose = 'read' | 'overwrite' | 'append';

const FLAGS: Record<OpenPurpose, number> = {
  read: constants.O_RDONLY,
  overwrite: constants.O_WRONLY | constants.O_CREAT,
  append: constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND,
};

/**
 * Opens a path `FileDirs.resolve()` accepted, so that what is opened is what was
 * checked: the last component is never followed if it is a symlink (O_NOFOLLOW), a
 * FIFO cannot block the app (O_NONBLOCK), and before a byte moves the real path of the
 * open file (from `/proc/self/fd`) must still be inside `dir`. A component swapped for
 * a symlink after `resolve()` (a race with `bash`) is refused here. Overwrite truncates
 * only after that check, so a redirected open never empties a file outside the dirs.
 */
export async function openContained(
  path: ResolvedFilePath,
  dir: string,
  purpose: OpenPurpose,
): Promise<FileHandle> {
  const existed = purpose === 'read' || (await exists(path.absolute));
  let handle: FileHandle;
  try {
    handle = await fs.open(
      path.absolute,
      FLAGS[purpose] | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o600,
    );
  } catch (error) {
    throw new FileAccessError(openErrorMessage(error, path.display));
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      throw new FileAccessError(
        stat.isDirectory()
          ? `${path.display} is a directory, not a file`
          : `${path.display} is not a regular file`,
      );
    const real = await openedPath(handle, path.absolute);
    if (real !== dir && !real.startsWith(dir + sep)) {
      if (!existed) await fs.unlink(real).catch(() => undefined);
      throw new FileAccessError(
        `Path '${path.display}' leaves ${path.alias} (.. and symlinks may not point outside it)`,
      );
    }
    if (purpose === 'overwrite') await handle.truncate(0);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The real path of an open file: Linux tells it through /proc; elsewhere the checked path, if it is the same file. */
async function openedPath(
  handle: FileHandle,
  checked: string,
): Promise<string> {
  try {
    return await fs.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    const [opened, named] = await Promise.all([
      handle.stat(),
      fs.lstat(checked).catch(() => null),
    ]);
    if (named && named.ino === opened.ino && named.dev === opened.dev)
      return await fs.realpath(checked);
    return '\0unknown';
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}

function openErrorMessage(error: unknown, display: string): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return `No such file: ${display}`;
    case 'ELOOP':
      return `${display} is a symbolic link: the file tools do not follow links`;
    case 'EISDIR':
      return `${display} is a directory, not a file`;
    case 'ENOTDIR':
      return `A parent of ${display} is not a directory`;
    case 'EACCES':
    case 'EPERM':
      return `Permission denied: ${display}`;
    case 'ENOSPC':
      return `The disk is full: ${display} could not be written`;
    default:
      return `Could not open ${display} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
