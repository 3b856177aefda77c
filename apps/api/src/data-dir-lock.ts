import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './startup-error';

/** One MetatronOS per data dir: a second one would fight over the same database files. */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, 'metatronos.pid');
    const holder = readPid(path);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
      throw new StartupError(
        `Another MetatronOS (pid ${holder}) is already using ${dataDir}. Stop it first, or delete ${path} if that process is not MetatronOS.`,
      );
    }
    writeFileSync(path, `${process.pid}\n`);
    return new DataDirLock(path);
  }

  release(): void {
    if (readPid(this.path) === process.pid) rmSync(this.path, { force: true });
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
