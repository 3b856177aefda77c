import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileDirs, type ResolvedFilePath } from './file-dirs';
import { FileMovedOutError, openInside } from './open-inside';

describe('openInside', () => {
  let dataDir: string;
  let dirs: FileDirs;
  let outside: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'open-inside-'));
    dirs = new FileDirs({ dataDir });
    const real = dirs.ensure();
    outside = join(dataDir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret'), 'owner secret');
    writeFileSync(join(real.file_state_dir, 'notes.md'), 'notes');
    mkdirSync(join(real.file_state_dir, 'sub'));
    writeFileSync(join(real.file_state_dir, 'sub', 'a.txt'), 'a');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const resolved = (path: string) => dirs.resolve(path) as ResolvedFilePath;

  it('opens a file that is still where it was resolved', async () => {
    const handle = await openInside(dirs, resolved('file_state_dir/notes.md'));
    try {
      expect(await handle.readFile('utf8')).toBe('notes');
    } finally {
      await handle.close();
    }
  });

  it('refuses a file swapped for a link after it was resolved', async () => {
    const file = resolved('file_state_dir/notes.md');
    rmSync(file.absolute);
    symlinkSync(join(outside, 'secret'), file.absolute);
    await expect(openInside(dirs, file)).rejects.toBeInstanceOf(
      FileMovedOutError,
    );
  });

  it('refuses a file whose parent became a link out after it was resolved', async () => {
    const file = resolved('file_state_dir/sub/a.txt');
    const sub = join(dirs.ensure().file_state_dir, 'sub');
    renameSync(sub, `${sub}-old`);
    writeFileSync(join(outside, 'a.txt'), 'outside a');
    symlinkSync(outside, sub);
    await expect(openInside(dirs, file)).rejects.toBeInstanceOf(
      FileMovedOutError,
    );
  });
});
