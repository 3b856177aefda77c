import {
  mkdtempSync,
  rmSync,
  writeFileSync,
  mkdirSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { archiveEntryProblem, unpackArchive } from './backup-archive';
import { BackupLimits } from './backup-limits';

describe('unpackArchive', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'backup-archive-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function archiveOf(
    files: Record<string, string | Buffer>,
  ): Promise<Buffer> {
    const src = join(dir, 'src');
    for (const [path, body] of Object.entries(files)) {
      mkdirSync(join(src, path, '..'), { recursive: true });
      writeFileSync(join(src, path), body);
    }
    const out = join(dir, 'a.tar.gz');
    await create(
      { gzip: true, cwd: src, portable: true, file: out },
      Object.keys(files),
    );
    const { readFileSync } = await import('node:fs');
    return readFileSync(out);
  }

  it('unpacks plain files', async () => {
    const archive = await archiveOf({
      'manifest.json': '{}',
      'files/state/a.txt': 'hello',
    });
    writeFileSync(join(dir, 'in.tar.gz'), archive);
    const into = join(dir, 'out');
    mkdirSync(into);
    const result = await unpackArchive(
      join(dir, 'in.tar.gz'),
      into,
      new BackupLimits(),
    );
    expect([...result.files].sort()).toEqual([
      'files/state/a.txt',
      'manifest.json',
    ]);
  });

  it.each([0.5, 0.9])(
    'refuses an archive cut at %p of its length',
    async (share) => {
      const { randomBytes } = await import('node:crypto');
      const archive = await archiveOf({
        'manifest.json': '{}',
        'media/big.bin': randomBytes(200_000),
      });
      writeFileSync(
        join(dir, 'in.tar.gz'),
        archive.subarray(0, Math.floor(archive.length * share)),
      );
      const into = join(dir, 'out');
      mkdirSync(into);
      await expect(
        unpackArchive(join(dir, 'in.tar.gz'), into, new BackupLimits()),
      ).rejects.toThrow(/truncated|damaged/);
      expect(readdirSync(dir)).toContain('out');
    },
    10_000,
  );
});

describe('archiveEntryProblem', () => {
  it.each([
    ['manifest.json', 'File', null],
    ['./manifest.json', 'File', null],
    ['db/', 'Directory', null],
    ['db/chats.ejson', 'File', null],
    ['media/ab.png', 'File', null],
    ['files/state/deep/x.md', 'File', null],
    ['media', 'File', /not part of a MetatronOS backup/],
    ['db/sub/x.ejson', 'File', /not part/],
    ['../x', 'File', /outside/],
    ['files/state/../../../x', 'File', /outside/],
    ['/etc/passwd', 'File', /absolute/],
    ['C:/x', 'File', /absolute/],
    ['files\\..\\x', 'File', /absolute or Windows/],
    ['files/state/l', 'SymbolicLink', /symbolic link/],
    ['files/state/l', 'Link', /hard link/],
    ['files/state/d', 'CharacterDevice', /special file/],
    ['other.txt', 'File', /not part/],
  ])('%s (%s)', (path, type, expected) => {
    const problem = archiveEntryProblem(path, type);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });
});
