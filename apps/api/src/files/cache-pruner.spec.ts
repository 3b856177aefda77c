import { SchedulerRegistry } from '@nestjs/schedule';
import {
  existsSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ManualClock } from '../clock/clock';
import { CachePruner } from './cache-pruner';
import { FileDirs } from './file-dirs';

const DAY = 24 * 3_600_000;
const NOW = new Date('2026-06-01T12:00:00Z');

describe('CachePruner (real files, a manual clock)', () => {
  let dataDir: string;
  let dirs: FileDirs;
  let cache: string;
  let state: string;
  let clock: ManualClock;
  let registry: SchedulerRegistry;
  let pruner: CachePruner;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cache-pruner-'));
    dirs = new FileDirs({ dataDir });
    ({ file_cache_dir: cache, file_state_dir: state } = dirs.ensure());
    clock = new ManualClock(NOW);
    registry = new SchedulerRegistry();
    pruner = new CachePruner(dirs, clock, registry);
  });
  afterEach(() => {
    pruner.onApplicationShutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A file of `size` bytes (sparse: no disk used) last modified `ageMs` before the clock's now. */
  function file(path: string, ageMs: number, size = 10): string {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '');
    if (size > 0) truncateSync(path, size);
    const at = new Date(clock.now().getTime() - ageMs);
    utimesSync(path, at, at);
    return path;
  }

  it('removes cache files older than 7 days (by the clock), keeps newer ones and never touches the state dir', async () => {
    const old = file(join(cache, 'old.txt'), 7 * DAY + 60_000);
    const deep = file(join(cache, 'a/b/deep.txt'), 30 * DAY);
    const fresh = file(join(cache, 'fresh.txt'), 6 * DAY);
    const kept = file(join(state, 'TODO.md'), 365 * DAY);

    expect(await pruner.prune()).toEqual({
      removedFiles: 2,
      removedBytes: 20,
      keptFiles: 1,
      keptBytes: 10,
    });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(deep)).toBe(false);
    // Folders emptied by the pruning go too; the cache dir itself stays.
    expect(existsSync(join(cache, 'a'))).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(kept)).toBe(true);
    expect(existsSync(cache)).toBe(true);

    // Time moves on: the fresh file ages out too.
    clock.advance(2 * DAY);
    await pruner.prune();
    expect(existsSync(fresh)).toBe(false);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('keeps at most 1,000 files, removing the oldest first', async () => {
    for (let i = 0; i < 1_005; i++)
      // file-0 is the oldest (1,005 minutes), file-1004 the newest.
      file(join(cache, 'many', `file-${i}`), (1_005 - i) * 60_000, 1);
    const report = await pruner.prune();
    expect(report).toMatchObject({ removedFiles: 5, keptFiles: 1_000 });
    const left = readdirSync(join(cache, 'many'));
    expect(left).toHaveLength(1_000);
    for (let i = 0; i < 5; i++) expect(left).not.toContain(`file-${i}`);
    expect(left).toContain('file-5');
  });

  it('keeps at most 512 MiB, removing the oldest first', async () => {
    const MiB = 1024 * 1024;
    const oldest = file(join(cache, 'video-1.mp4'), 3 * DAY, 200 * MiB);
    const middle = file(join(cache, 'video-2.mp4'), 2 * DAY, 200 * MiB);
    const newest = file(join(cache, 'video-3.mp4'), 1 * DAY, 200 * MiB);
    expect(await pruner.prune()).toEqual({
      removedFiles: 1,
      removedBytes: 200 * MiB,
      keptFiles: 2,
      keptBytes: 400 * MiB,
    });
    expect(existsSync(oldest)).toBe(false);
    expect(existsSync(middle)).toBe(true);
    expect(existsSync(newest)).toBe(true);
  });

  it('removes an old symlink itself, never what it points to, and does not walk into linked folders', async () => {
    const outside = join(dataDir, 'outside');
    mkdirSync(outside);
    const target = file(join(outside, 'precious.txt'), 100 * DAY);
    file(join(outside, 'sub', 'also-precious.txt'), 100 * DAY);
    symlinkSync(target, join(cache, 'link.txt'));
    symlinkSync(outside, join(cache, 'linked-dir'));
    const at = new Date(clock.now().getTime() - 10 * DAY);
    // lutimes: the links' own times, not their targets'.
    lutimesSync(join(cache, 'link.txt'), at, at);
    lutimesSync(join(cache, 'linked-dir'), at, at);

    await pruner.prune();
    expect(existsSync(target)).toBe(true);
    expect(existsSync(join(outside, 'sub', 'also-precious.txt'))).toBe(true);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('runs at start, then periodically until shutdown', async () => {
    const old = file(join(cache, 'old.txt'), 8 * DAY);
    pruner.onApplicationBootstrap();
    expect(pruner.scheduled).toBe(true);
    expect(registry.getIntervals()).toEqual(['files-cache-prune']);
    await pruner.prune();
    expect(existsSync(old)).toBe(false);

    pruner.onApplicationShutdown();
    expect(pruner.scheduled).toBe(false);
    expect(registry.getIntervals()).toEqual([]);
  });
});
