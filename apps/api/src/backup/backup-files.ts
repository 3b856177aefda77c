import { copyFile, link, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface CopiedTree {
  files: number;
  bytes: number;
}

/**
 * Copies a folder tree (plain files and folders only; links and special files
 * are left out), hard-linking files that are never rewritten in place
 * (content-addressed media and attachments) and copying the others, so a file
 * changed while the archive is written cannot tear it.
 */
export async function copyTree(
  from: string,
  to: string,
  mode: 'link' | 'copy',
): Promise<CopiedTree> {
  const result: CopiedTree = { files: 0, bytes: 0 };
  const walk = async (source: string, target: string): Promise<void> => {
    await mkdir(target, { recursive: true, mode: 0o700 });
    for (const entry of await readdir(source, { withFileTypes: true })) {
      const s = join(source, entry.name);
      const t = join(target, entry.name);
      if (entry.isDirectory()) {
        await walk(s, t);
      } else if (entry.isFile()) {
        const stat = await lstat(s);
        if (mode === 'link') await link(s, t).catch(() => copyFile(s, t));
        else await copyFile(s, t);
        result.files += 1;
        result.bytes += stat.size;
      }
    }
  };
  const root = await lstat(from).catch(() => null);
  if (root?.isDirectory()) await walk(from, to);
  return result;
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
