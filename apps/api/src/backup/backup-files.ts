import { link, lstat, mkdir, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ContainedDir,
  FileAccessError,
  readChunks,
  writeChunks,
} from '../files/contained-file';

export interface CopiedTree {
  files: number;
  bytes: number;
}

/**
 * Copies a folder tree (plain files and folders only; links and special files
 * are left out), hard-linking files that are never rewritten in place
 * (content-addressed media and attachments) and copying the others, so a file
 * changed while the archive is written cannot tear it. The source is walked from
 * open directory descriptors without following links (see contained-file.ts): the
 * file dirs are the bash sandbox's to change, and a folder swapped for a link to
 * DATA_DIR/db meanwhile must not pull the database into the archive.
 */
export async function copyTree(
  from: string,
  to: string,
  mode: 'link' | 'copy',
): Promise<CopiedTree> {
  const result: CopiedTree = { files: 0, bytes: 0 };
  const walk = async (source: ContainedDir, target: string): Promise<void> => {
    await mkdir(target, { recursive: true, mode: 0o700 });
    for (const { name, info } of await source.list()) {
      const t = join(target, name);
      if (info.isDirectory()) {
        const sub = await source.openDir(name).catch(() => null);
        if (!sub) continue;
        try {
          await walk(sub, t);
        } finally {
          await sub.close();
        }
      } else if (info.isFile()) {
        const size = await copyEntry(source, name, t, mode);
        if (size === null) continue;
        result.files += 1;
        result.bytes += size;
      }
    }
  };
  const root = await ContainedDir.openRoot(from, 'backup').catch(() => null);
  if (!root) return result;
  try {
    await walk(root, to);
  } finally {
    await root.close();
  }
  return result;
}

/** One regular file into `target`; its size, or null when it is no longer a regular file. */
async function copyEntry(
  dir: ContainedDir,
  name: string,
  target: string,
  mode: 'link' | 'copy',
): Promise<number | null> {
  if (mode === 'link') {
    // link(2) never follows the last component: a link put in place is linked itself, then dropped.
    const linked = await link(dir.entryPath(name), target).then(
      () => true,
      () => false,
    );
    if (linked) {
      const info = await lstat(target);
      if (info.isFile()) return info.size;
      await unlink(target);
      return null;
    }
  }
  let handle;
  try {
    handle = await dir.openFile(name, 'read');
  } catch (error) {
    if (error instanceof FileAccessError) return null;
    throw error;
  }
  try {
    const out = await open(target, 'wx', 0o600);
    try {
      return await writeChunks(out, readChunks(handle));
    } finally {
      await out.close();
    }
  } finally {
    await handle.close();
  }
}

/** Counts the files and bytes of an unpacked folder (for the manifest check). */
export async function measureTree(dir: string): Promise<CopiedTree> {
  const result: CopiedTree = { files: 0, bytes: 0 };
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const p = join(path, entry.name);
      if (entry.isDirectory()) await walk(p);
      else if (entry.isFile()) {
        result.files += 1;
        result.bytes += (await lstat(p)).size;
      }
    }
  };
  const root = await lstat(dir).catch(() => null);
  if (root?.isDirectory()) await walk(dir);
  return result;
}
