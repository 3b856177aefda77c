import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import {
  lstat,
  mkdir,
  open,
  readdir,
  rename,
  rmdir,
  unlink,
  type FileHandle,
} from 'node:fs/promises';

/**
 * Why a path was not opened, in words a model or the console can show. `reason`
 * lets a route pick its status (404 for `missing`, 400 otherwise).
 */
export class FileAccessError extends Error {
  constructor(
    message: string,
    readonly reason: 'missing' | 'refused' | 'exists' | 'failed' = 'refused',
  ) {
    super(message);
  }
}

/**
 * - `read`: an existing regular file.
 * - `overwrite` / `append`: a regular file, created if missing (truncated only
 *   after it is known to be a regular file beneath the root).
 * - `create`: a new file, never an existing one (O_EXCL).
 */
export type OpenPurpose = 'read' | 'overwrite' | 'append' | 'create';

const FILE_FLAGS: Record<OpenPurpose, number> = {
  read: constants.O_RDONLY,
  overwrite: constants.O_WRONLY | constants.O_CREAT,
  // Readable too: a caller may check what the file ends with before appending.
  append: constants.O_RDWR | constants.O_CREAT | constants.O_APPEND,
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
};

// Never follow a link at the last component; a FIFO must not block the app.
const NO_FOLLOW = constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIR_FLAGS =
  constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The one way the app opens a path below a root it trusts (the file dirs, the
 * attachment store, ...), so that what is checked is what is used, whatever the
 * bash sandbox does to the tree meanwhile.
 *
 * Node has no `openat`, but on Linux `/proc/self/fd/<dirfd>/<name>` looks `name`
 * up in the directory the descriptor holds (the magic link is the open directory,
 * not a path re-read by name). So the root is opened once, and every component is
 * opened from its parent's descriptor with `O_NOFOLLOW` (`O_DIRECTORY` for
 * directories): a symlink at any component, `..`, an absolute component or a
 * non-regular final file is refused, and a folder swapped for a link after the
 * walk changes nothing, since the caller holds descriptors, never names.
 * Creating, renaming and removing also happen by name inside an opened parent.
 */
export class ContainedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** How this dir is named to the model or the owner: `file_cache_dir/a/b`. */
    readonly display: string,
  ) {}

  /** Opens a root the app itself chose (its real path, from the config). */
  static async openRoot(root: string, display: string): Promise<ContainedDir> {
    try {
      return new ContainedDir(
        await open(root, constants.O_RDONLY | constants.O_DIRECTORY),
        display,
      );
    } catch (error) {
      throw new FileAccessError(
        `${display} cannot be opened (${code(error)})`,
        code(error) === 'ENOENT' ? 'missing' : 'failed',
      );
    }
  }

  get fd(): number {
    return this.handle.fd;
  }

  /** Name of `name` inside this open directory, for the calls that take a path (mkdir, rename, unlink). */
  entryPath(name: string): string {
    checkName(name, this.display);
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  private child(name: string): string {
    return this.display === '' ? name : `${this.display}/${name}`;
  }

  /** The entry itself (a link is described, never followed); null when there is none. */
  async lstat(name: string): Promise<Stats | null> {
    try {
      return await lstat(this.entryPath(name));
    } catch (error) {
      if (code(error) === 'ENOENT') return null;
      throw error;
    }
  }

  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  /** A subdirectory, opened without following a link; `create` makes it (0700) when missing. */
  async openDir(
    name: string,
    options: { create?: boolean } = {},
  ): Promise<ContainedDir> {
    const path = this.entryPath(name);
    if (options.create)
      await mkdir(path, { mode: 0o700 }).catch((error: unknown) => {
        if (code(error) !== 'EEXIST') throw failure(error, this.child(name));
      });
    try {
      return new ContainedDir(await open(path, DIR_FLAGS), this.child(name));
    } catch (error) {
      throw await this.explain(error, name, 'dir');
    }
  }

  /** A regular file in this directory, held open: the caller uses only the handle from here on. */
  async openFile(name: string, purpose: OpenPurpose): Promise<FileHandle> {
    const path = this.entryPath(name);
    let handle: FileHandle;
    try {
      handle = await open(path, FILE_FLAGS[purpose] | NO_FOLLOW, 0o600);
    } catch (error) {
      throw await this.explain(error, name, 'file');
    }
    try {
      const info = await handle.stat();
      if (!info.isFile())
        throw new FileAccessError(
          info.isDirectory()
            ? `${this.child(name)} is a directory, not a file`
            : `${this.child(name)} is not a regular file`,
        );
      // Only a regular file opened here is ever emptied.
      if (purpose === 'overwrite') await handle.truncate(0);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The entries of this directory with what each is (links described, not followed). */
  async list(): Promise<Array<{ name: string; info: Stats }>> {
    const names = await readdir(`/proc/self/fd/${this.handle.fd}`);
    const entries: Array<{ name: string; info: Stats }> = [];
    for (const name of names) {
      const info = await this.lstat(name).catch(() => null);
      if (info) entries.push({ name, info });
    }
    return entries;
  }

  /**
   * Removes an entry: a link or file is unlinked itself, a directory is emptied
   * through descriptors (a subfolder swapped for a link meanwhile is unlinked, its
   * target untouched).
   */
  async remove(name: string): Promise<void> {
    const info = await this.lstat(name);
    if (!info)
      throw new FileAccessError(
        `No such file or directory: ${this.child(name)}`,
        'missing',
      );
    if (!info.isDirectory()) {
      await unlink(this.entryPath(name));
      return;
    }
    let sub: ContainedDir;
    try {
      sub = await this.openDir(name);
    } catch (error) {
      // Swapped for a link or a file since the lstat: remove that entry only.
      if (error instanceof FileAccessError && error.reason === 'refused') {
        await unlink(this.entryPath(name));
        return;
      }
      throw error;
    }
    try {
      for (const entry of await sub.list()) await sub.remove(entry.name);
    } finally {
      await sub.close();
    }
    await rmdir(this.entryPath(name));
  }

  /** Renames `name` here to `toName` in `to` (both held open): a link at either name is replaced, never followed. */
  async rename(name: string, to: ContainedDir, toName: string): Promise<void> {
    const target = await to.lstat(toName);
    if (target?.isDirectory())
      throw new FileAccessError(`${to.child(toName)} is a directory`);
    await rename(this.entryPath(name), to.entryPath(toName));
  }

  close(): Promise<void> {
    return this.handle.close().catch(() => undefined);
  }

  /** Turns an open error into the sentence the model or owner sees. */
  private async explain(
    error: unknown,
    name: string,
    wanted: 'dir' | 'file',
  ): Promise<FileAccessError> {
    const shown = this.child(name);
    const info = await this.lstat(name).catch(() => null);
    if (info?.isSymbolicLink())
      return new FileAccessError(
        `${shown} is a symbolic link: files are never opened through links`,
      );
    if (wanted === 'file' && info?.isDirectory())
      return new FileAccessError(`${shown} is a directory, not a file`);
    switch (code(error)) {
      case 'ENOENT':
        return new FileAccessError(
          wanted === 'dir'
            ? `No such directory: ${shown}`
            : `No such file: ${shown}`,
          'missing',
        );
      case 'EEXIST':
        return new FileAccessError(`${shown} already exists`, 'exists');
      case 'ENOTDIR':
        return new FileAccessError(
          wanted === 'dir'
            ? `${shown} is not a directory`
            : `A parent of ${shown} is not a directory`,
        );
      case 'EISDIR':
        return new FileAccessError(`${shown} is a directory, not a file`);
      case 'ENXIO':
        return new FileAccessError(`${shown} is not a regular file`);
      default:
        return failure(error, shown);
    }
  }
}

/**
 * Splits a `/`-separated path below a root into components, refusing what a walk
 * must never take: `..`, an absolute path, NUL. `.` and empty parts are dropped.
 */
export function pathComponents(relative: string, display = relative): string[] {
  if (relative.includes('\0'))
    throw new FileAccessError(`${display}: a path must not contain NUL`);
  if (relative.startsWith('/'))
    throw new FileAccessError(
      `${display}: an absolute path is not accepted here`,
    );
  const parts = relative.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..'))
    throw new FileAccessError(`${display}: '..' is not accepted in a path`);
  return parts;
}

/**
 * Walks `relative` from `root` to the directory that holds its last component.
 * `createParents` makes missing folders on the way, each inside its opened parent.
 * The caller closes the returned dir.
 */
export async function openParentBeneath(
  root: string,
  rootDisplay: string,
  relative: string,
  options: { createParents?: boolean } = {},
): Promise<{ dir: ContainedDir; name: string }> {
  const parts = pathComponents(relative, join(rootDisplay, relative));
  const name = parts.pop();
  if (name === undefined)
    throw new FileAccessError(`${rootDisplay} is a directory, not a file`);
  const dir = await walk(root, rootDisplay, parts, options.createParents);
  return { dir, name };
}

/** Opens the directory `relative` names below `root` (`''`: the root itself). */
export function openDirBeneath(
  root: string,
  rootDisplay: string,
  relative: string,
  options: { create?: boolean } = {},
): Promise<ContainedDir> {
  return walk(
    root,
    rootDisplay,
    pathComponents(relative, join(rootDisplay, relative)),
    options.create,
  );
}

/** Opens a regular file below `root` for `purpose`; the caller uses (and closes) only the handle. */
export async function openFileBeneath(
  root: string,
  rootDisplay: string,
  relative: string,
  purpose: OpenPurpose,
  options: { createParents?: boolean } = {},
): Promise<FileHandle> {
  const { dir, name } = await openParentBeneath(
    root,
    rootDisplay,
    relative,
    options,
  );
  try {
    return await dir.openFile(name, purpose);
  } finally {
    await dir.close();
  }
}

/**
 * Writes a whole file below `root` atomically: a new temp file (O_EXCL) in the
 * opened parent, then a rename inside that same parent. A folder swapped for a
 * link meanwhile only moves where the old folder now is, never outside.
 */
export async function replaceFileBeneath(
  root: string,
  rootDisplay: string,
  relative: string,
  write: (handle: FileHandle) => Promise<void>,
  options: { createParents?: boolean } = {},
): Promise<void> {
  const { dir, name } = await openParentBeneath(
    root,
    rootDisplay,
    relative,
    options,
  );
  try {
    const temp = `.${name}.${process.pid}-${randomBytes(6).toString('hex')}.part`;
    const handle = await dir.openFile(temp, 'create');
    try {
      await write(handle);
      await handle.close();
      await dir.rename(temp, dir, name);
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(dir.entryPath(temp)).catch(() => undefined);
      throw error;
    }
  } finally {
    await dir.close();
  }
}

async function walk(
  root: string,
  rootDisplay: string,
  parts: string[],
  create = false,
): Promise<ContainedDir> {
  let dir = await ContainedDir.openRoot(root, rootDisplay);
  for (const part of parts) {
    try {
      const next = await dir.openDir(part, { create });
      await dir.close();
      dir = next;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }
  return dir;
}

function checkName(name: string, where: string): void {
  if (
    name === '' ||
    name === '.' ||
    name === '..' ||
    name.includes('/') ||
    name.includes('\0')
  )
    throw new FileAccessError(
      `'${name.replace(/\0/g, '\\0')}' is not a file name inside ${where || 'the root'}`,
    );
}

function join(display: string, relative: string): string {
  return display === '' ? relative : `${display}/${relative}`;
}

function code(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'error';
}

function failure(error: unknown, shown: string): FileAccessError {
  switch (code(error)) {
    case 'EACCES':
    case 'EPERM':
      return new FileAccessError(`Permission denied: ${shown}`);
    case 'ENOSPC':
      return new FileAccessError(
        `The disk is full: ${shown} could not be written`,
        'failed',
      );
    case 'EEXIST':
    case 'ENOTDIR':
      return new FileAccessError(
        `A parent of ${shown} is a file, not a directory`,
      );
    default:
      return new FileAccessError(
        `Could not open ${shown} (${code(error)})`,
        'failed',
      );
  }
}

/**
 * The bytes of an opened file from `start`, read by position: a fresh pass each
 * call (an upload retried reads it again), and the handle stays the caller's to close
 * (a FileHandle stream would close it, or keep it from closing).
 */
export async function* readChunks(
  handle: FileHandle,
  start = 0,
): AsyncGenerator<Uint8Array> {
  let position = start;
  for (;;) {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/** Writes every chunk of `source` through the handle; the number of bytes written. */
export async function writeChunks(
  handle: FileHandle,
  source: AsyncIterable<Uint8Array>,
): Promise<number> {
  let written = 0;
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await handle.write(
        chunk,
        offset,
        chunk.length - offset,
      );
      offset += bytesWritten;
    }
    written += chunk.length;
  }
  return written;
}
