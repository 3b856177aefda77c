import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  type WriteStream,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { ReadEntry } from 'tar';
import { BACKUP_FILE_DIRS } from '@metatronos/shared-types';
import { mongo } from 'mongoose';
import type { BackupLimits } from './backup-limits';

/** Why an archive cannot be restored; the message is shown to the owner as it is. */
export class BackupArchiveError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
    this.name = 'BackupArchiveError';
  }
}

const COLLECTION_FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}\.ejson$/;
const FILE_DIRS = new Set<string>(BACKUP_FILE_DIRS);

/** Why this entry may not be unpacked, or null. Only plain files and folders at the backup's own places. */
export function archiveEntryProblem(path: string, type: string): string | null {
  const shown = JSON.stringify(path.slice(0, 200));
  if (!path || path.length > 4096 || path.includes('\0'))
    return `an entry has an unusable name ${shown}`;
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\'))
    return `the entry ${shown} has an absolute or Windows path`;
  const parts = path
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '')
    .split('/');
  if (parts.includes('..'))
    return `the entry ${shown} points outside the archive ('..')`;
  if (parts.some((part) => part === '' || part === '.'))
    return `the entry ${shown} has an empty path segment`;
  const isFile = type === 'File' || type === 'OldFile';
  if (!isFile && type !== 'Directory')
    return `the entry ${shown} is a ${type === 'SymbolicLink' ? 'symbolic link' : type === 'Link' ? 'hard link' : `special file (${type})`}, which a backup never holds`;
  const [top] = parts;
  if (top === 'manifest.json' && parts.length === 1 && isFile) return null;
  if (top === 'db') {
    if (parts.length === 1 && !isFile) return null;
    if (parts.length === 2 && isFile && COLLECTION_FILE.test(parts[1]))
      return null;
  }
  if (FILE_DIRS.has(top) && (parts.length > 1 || !isFile)) return null;
  return `it holds ${shown}, which is not part of a MetatronOS backup`;
}

/** The normalised relative path of an accepted entry. */
function entryPath(path: string): string {
  return path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

export interface UnpackedArchive {
  /** Relative paths of every file unpacked. */
  files: Set<string>;
  bytes: number;
}

/**
 * Unpacks a backup (.tar.gz or .tar) into an empty folder, refusing it as a whole
 * at the first entry that is not a plain file or folder at a backup's own place
 * (links, devices, absolute paths, `..`), when it is damaged or truncated, or over
 * the limits. The caller deletes the folder when this throws.
 */
export async function unpackArchive(
  archive: string,
  into: string,
  limits: BackupLimits,
): Promise<UnpackedArchive> {
  const files = new Set<string>();
  let bytes = 0;
  let entries = 0;
  let refusal: BackupArchiveError | null = null;
  const writes: Promise<void>[] = [];
  const outputs: WriteStream[] = [];
  // tar loads with the first restore: ~1 MB of heap the server would hold from its start.
  const { Parser } = await import('tar');
  const parser = new Parser({
    strict: true,
    maxDecompressionRatio: limits.maxCompressionRatio,
  });

  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', () => resolve());
    parser.on('error', (error: Error) => reject(error));
  });
  const refuse = (error: BackupArchiveError) => {
    if (refusal) return;
    refusal = error;
    parser.abort(error);
  };

  parser.on('entry', (entry: ReadEntry) => {
    try {
      take(entry);
    } catch (error) {
      entry.resume();
      refuse(new BackupArchiveError(damagedReason(error)));
    }
  });
  const take = (entry: ReadEntry): void => {
    if (refusal) return void entry.resume();
    entries += 1;
    const problem =
      entries > limits.maxEntries
        ? `it holds more than ${limits.maxEntries} files and folders`
        : archiveEntryProblem(entry.path, entry.type);
    if (problem) {
      entry.resume();
      return refuse(new BackupArchiveError(problem));
    }
    const path = entryPath(entry.path);
    const target = join(into, path);
    if (entry.type === 'Directory') {
      mkdirSync(target, { recursive: true, mode: 0o700 });
      return void entry.resume();
    }
    bytes += entry.size;
    if (bytes > limits.maxUnpackedBytes) {
      entry.resume();
      return refuse(
        new BackupArchiveError(
          `it unpacks to more than ${Math.round(limits.maxUnpackedBytes / 1024 ** 2)} MB`,
          true,
        ),
      );
    }
    if (files.has(path)) {
      entry.resume();
      return refuse(
        new BackupArchiveError(`it holds ${JSON.stringify(path)} twice`),
      );
    }
    files.add(path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    const out = createWriteStream(target, { flags: 'wx', mode: 0o600 });
    outputs.push(out);
    writes.push(
      new Promise<void>((resolve, reject) => {
        out.on('close', resolve);
        out.on('error', reject);
      }),
    );
    entry.pipe(out);
  };

  const source = createReadStream(archive);
  source.on('error', (error) => parser.abort(error));
  source.pipe(parser as unknown as NodeJS.WritableStream);
  try {
    await done;
    await Promise.all(writes);
  } catch (error) {
    // Close every file being written (an aborted entry never ends) before the caller deletes the folder.
    source.destroy();
    for (const out of outputs) out.destroy();
    await Promise.allSettled(writes);
    if (refusal) throw refusal;
    throw new BackupArchiveError(damagedReason(error));
  }
  return { files, bytes };
}

function damagedReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/unrecognized archive format/i.test(message))
    return 'it is not a .tar.gz archive';
  if (/checksum failure|TAR_ENTRY_INVALID/i.test(message))
    return 'it is not a .tar.gz archive, or a damaged one';
  if (/decompression ratio/i.test(message))
    return 'it unpacks to far more than its size (a compression bomb?)';
  if (/unexpected end|truncated/i.test(message))
    return 'the archive is truncated (the download or upload was cut short)';
  return `the archive is damaged (${message.slice(0, 200)})`;
}

/**
 * The documents of one `db/<collection>.ejson` file, one canonical Extended JSON
 * document a line, parsed as they are read (no line over `maxLineBytes`).
 */
export async function* readEjsonDocuments(
  file: string,
  maxLineBytes: number,
): AsyncGenerator<mongo.BSON.Document> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  const parse = (text: string): mongo.BSON.Document => {
    line += 1;
    let doc: unknown;
    try {
      doc = mongo.BSON.EJSON.parse(text, { relaxed: false });
    } catch {
      throw new BackupArchiveError(
        `line ${line} of ${file.split('/').pop()} is not Extended JSON`,
      );
    }
    if (
      !doc ||
      typeof doc !== 'object' ||
      Array.isArray(doc) ||
      !('_id' in doc)
    )
      throw new BackupArchiveError(
        `line ${line} of ${file.split('/').pop()} is not a document with an _id`,
      );
    return doc as mongo.BSON.Document;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, i));
      const text = Buffer.concat(pending).toString('utf8');
      pending = [];
      pendingBytes = 0;
      start = i + 1;
      if (text.trim()) yield parse(text);
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxLineBytes)
        throw new BackupArchiveError(
          `a document in ${file.split('/').pop()} is larger than ${Math.round(maxLineBytes / 1024 ** 2)} MB`,
        );
    }
  }
  const rest = Buffer.concat(pending).toString('utf8');
  if (rest.trim()) yield parse(rest);
}
