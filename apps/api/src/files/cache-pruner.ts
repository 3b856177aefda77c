import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { promises as fs } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { Clock } from '../clock/clock';
import { openParentBeneath } from './contained-file';
import { FileDirs } from './file-dirs';
import {
  CACHE_MAX_AGE_MS,
  CACHE_MAX_BYTES,
  CACHE_MAX_FILES,
  CACHE_PRUNE_INTERVAL_MS,
} from './file-limits';

export interface CacheLimits {
  maxAgeMs: number;
  maxFiles: number;
  maxBytes: number;
}

export interface PruneReport {
  removedFiles: number;
  removedBytes: number;
  keptFiles: number;
  keptBytes: number;
}

interface CacheEntry {
  path: string;
  size: number;
  mtimeMs: number;
}

const INTERVAL_NAME = 'files-cache-prune';

/**
 * Keeps `file_cache_dir` small: files older than 7 days go, then the oldest until at
 * most 1,000 files and 512 MiB remain. Runs at start and every hour; age is measured
 * against the injectable clock, so tests move time instead of waiting. The state dir
 * is never touched.
 */
@Injectable()
export class CachePruner
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger(CachePruner.name);
  private running: Promise<PruneReport> | null = null;
  private timer: NodeJS.Timeout | null = null;
  readonly limits: CacheLimits = {
    maxAgeMs: CACHE_MAX_AGE_MS,
    maxFiles: CACHE_MAX_FILES,
    maxBytes: CACHE_MAX_BYTES,
  };

  constructor(
    private readonly dirs: FileDirs,
    private readonly clock: Clock,
    private readonly registry: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    void this.prune().catch(() => undefined);
    this.timer = setInterval(
      () => void this.prune().catch(() => undefined),
      CACHE_PRUNE_INTERVAL_MS,
    );
    this.timer.unref();
    this.registry.addInterval(INTERVAL_NAME, this.timer);
  }

  onApplicationShutdown(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    if (this.registry.doesExist('interval', INTERVAL_NAME))
      this.registry.deleteInterval(INTERVAL_NAME);
  }

  /** Whether the periodic run is scheduled (tests check it stops on shutdown). */
  get scheduled(): boolean {
    return this.timer !== null;
  }

  /** One pruning pass; a call during a pass waits for that pass instead of starting a second one. */
  prune(): Promise<PruneReport> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<PruneReport> {
    const root = this.dirs.ensure().file_cache_dir;
    const now = this.clock.now().getTime();
    const files: CacheEntry[] = [];
    const dirs: string[] = [];
    await walk(root, files, dirs);

    const report: PruneReport = {
      removedFiles: 0,
      removedBytes: 0,
      keptFiles: 0,
      keptBytes: 0,
    };
    const touched = new Set<string>();
    const remove = async (entry: CacheEntry): Promise<void> => {
      if (await removeInside(root, entry.path)) {
        report.removedFiles++;
        report.removedBytes += entry.size;
        touched.add(dirname(entry.path));
      }
    };

    const cutoff = now - this.limits.maxAgeMs;
    const fresh: CacheEntry[] = [];
    for (const entry of files) {
      if (entry.mtimeMs < cutoff) await remove(entry);
      else fresh.push(entry);
    }
    // Oldest first; the same time falls back to the path, so a run is repeatable.
    fresh.sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path));
    let count = fresh.length;
    let bytes = fresh.reduce((sum, entry) => sum + entry.size, 0);
    for (const entry of fresh) {
      if (count <= this.limits.maxFiles && bytes <= this.limits.maxBytes) break;
      await remove(entry);
      count--;
      bytes -= entry.size;
    }

    // Deepest first, so a folder emptied by its emptied sub-folder goes too.
    for (const dir of dirs.sort((a, b) => b.length - a.length)) {
      const stat = await fs.lstat(dir).catch(() => null);
      if (!stat?.isDirectory()) continue;
      if (!touched.has(dir) && stat.mtimeMs >= cutoff) continue;
      // rmdir refuses a folder that is not empty.
      if (await removeEmptyDir(root, dir)) touched.add(dirname(dir));
    }

    report.keptFiles = count;
    report.keptBytes = bytes;
    if (report.removedFiles > 0)
      this.logger.log(
        `Pruned the file cache: ${report.removedFiles} file(s), ${report.removedBytes} bytes removed; ${count} kept`,
      );
    return report;
  }
}

/** Every file and folder below `dir`, without following symlinks (a link counts as a small file). */
async function walk(
  dir: string,
  files: CacheEntry[],
  dirs: string[],
): Promise<void> {
  const entries = await fs
    .readdir(dir, { withFileTypes: true })
    .catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      dirs.push(path);
      await walk(path, files, dirs);
      continue;
    }
    const stat = await fs.lstat(path).catch(() => null);
    if (!stat || stat.isDirectory()) continue;
    files.push({ path, size: stat.size, mtimeMs: stat.mtimeMs });
  }
}

/**
 * Unlinks `path` (a file or link, never a folder) by name inside its folder opened
 * link-safe from `root`: a folder swapped for a link meanwhile is refused by the
 * walk, so nothing outside the cache dir is ever removed.
 */
async function removeInside(root: string, path: string): Promise<boolean> {
  const below = relative(root, path).split(sep).join('/');
  try {
    const { dir, name } = await openParentBeneath(
      root,
      'file_cache_dir',
      below,
    );
    try {
      const info = await dir.lstat(name);
      if (!info || info.isDirectory()) return false;
      await fs.unlink(dir.entryPath(name));
      return true;
    } finally {
      await dir.close();
    }
  } catch {
    return false;
  }
}

/** Removes `path` if it is an empty folder, by name inside its parent opened link-safe from `root`. */
async function removeEmptyDir(root: string, path: string): Promise<boolean> {
  const below = relative(root, path).split(sep).join('/');
  try {
    const { dir, name } = await openParentBeneath(
      root,
      'file_cache_dir',
      below,
    );
    try {
      const info = await dir.lstat(name);
      if (!info?.isDirectory()) return false;
      await fs.rmdir(dir.entryPath(name));
      return true;
    } finally {
      await dir.close();
    }
  } catch {
    return false;
  }
}
