import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ContainedDir,
  FileAccessError,
  openDirBeneath,
  openFileBeneath,
  openParentBeneath,
  replaceFileBeneath,
  type OpenPurpose,
} from './contained-file';

describe('contained-file: opening below a root without following links', () => {
  let base: string;
  let root: string;
  let outside: string;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'contained-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, 'a', 'b', 'file.txt'), 'inside');
    writeFileSync(join(root, 'top.txt'), 'top');
    writeFileSync(join(outside, 'file.txt'), 'outside secret');
    mkdirSync(join(outside, 'b'));
    writeFileSync(join(outside, 'b', 'file.txt'), 'outside secret');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const outsideUntouched = () => {
    expect(readFileSync(join(outside, 'file.txt'), 'utf8')).toBe(
      'outside secret',
    );
    expect(readFileSync(join(outside, 'b', 'file.txt'), 'utf8')).toBe(
      'outside secret',
    );
    expect(readdirSync(outside).sort()).toEqual(['b', 'file.txt']);
    expect(readdirSync(join(outside, 'b'))).toEqual(['file.txt']);
  };

  const read = async (relative: string) => {
    const handle = await openFileBeneath(root, 'r', relative, 'read');
    try {
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  };

  it('reads and writes regular files below the root', async () => {
    expect(await read('a/b/file.txt')).toBe('inside');
    expect(await read('./a//b/file.txt')).toBe('inside');
    const handle = await openFileBeneath(root, 'r', 'n/m/new.txt', 'create', {
      createParents: true,
    });
    await handle.writeFile('new');
    await handle.close();
    expect(readFileSync(join(root, 'n', 'm', 'new.txt'), 'utf8')).toBe('new');
  });

  const PURPOSES: OpenPurpose[] = ['read', 'overwrite', 'append', 'create'];

  // Each row: how the tree is changed, the path opened, the words of the refusal.
  const ATTACKS: Array<[string, () => void, string, RegExp]> = [
    [
      'a symlink as the first component',
      () => symlinkSync(outside, join(root, 'l')),
      'l/file.txt',
      /r\/l is a symbolic link/,
    ],
    [
      'a symlink as a middle component',
      () => {
        rmSync(join(root, 'a', 'b'), { recursive: true });
        symlinkSync(join(outside, 'b'), join(root, 'a', 'b'));
      },
      'a/b/file.txt',
      /r\/a\/b is a symbolic link/,
    ],
    [
      'a symlink to a folder inside the root',
      () => symlinkSync(join(root, 'a'), join(root, 'alias')),
      'alias/b/file.txt',
      /r\/alias is a symbolic link/,
    ],
    [
      'a final symlink to an outside file',
      () => symlinkSync(join(outside, 'file.txt'), join(root, 'fl.txt')),
      'fl.txt',
      /r\/fl.txt is a symbolic link/,
    ],
    [
      'a final symlink to a file inside',
      () => symlinkSync(join(root, 'top.txt'), join(root, 'in.txt')),
      'in.txt',
      /r\/in.txt is a symbolic link/,
    ],
    [
      'a dangling final symlink (a create would land outside)',
      () => symlinkSync(join(outside, 'made.txt'), join(root, 'dangling.txt')),
      'dangling.txt',
      /r\/dangling.txt is a symbolic link/,
    ],
    [
      '.. at the start',
      () => undefined,
      '../outside/file.txt',
      /'\.\.' is not/,
    ],
    ['.. in the middle', () => undefined, 'a/../../outside/file.txt', /'\.\.'/],
    [
      'an absolute path',
      () => undefined,
      '/etc/passwd',
      /absolute path is not accepted/,
    ],
    ['a NUL', () => undefined, 'a\0b', /NUL/],
    [
      'a directory as the file',
      () => undefined,
      'a/b',
      /r\/a\/b is a directory/,
    ],
    [
      'a file as a folder on the way',
      () => undefined,
      'top.txt/x',
      /r\/top.txt is not a directory/,
    ],
  ];

  describe.each(ATTACKS)('refuses %s', (_name, arrange, relative, words) => {
    it.each(PURPOSES)(
      'for %s, and touches nothing outside',
      async (purpose) => {
        arrange();
        await expect(
          openFileBeneath(root, 'r', relative, purpose, {
            createParents: true,
          }),
        ).rejects.toThrow(words);
        outsideUntouched();
        expect(existsSync(join(outside, 'made.txt'))).toBe(false);
        expect(readFileSync(join(root, 'top.txt'), 'utf8')).toBe('top');
      },
    );
  });

  it('refuses a FIFO without blocking (read and write)', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    for (const purpose of ['read', 'overwrite', 'append'] as const)
      await expect(openFileBeneath(root, 'r', 'pipe', purpose)).rejects.toThrow(
        /r\/pipe is not a regular file/,
      );
  });

  it('create never opens an existing file, and says so', async () => {
    await expect(
      openFileBeneath(root, 'r', 'top.txt', 'create'),
    ).rejects.toMatchObject({ reason: 'exists' });
    expect(readFileSync(join(root, 'top.txt'), 'utf8')).toBe('top');
  });

  it('a missing file is reported as missing', async () => {
    await expect(
      openFileBeneath(root, 'r', 'a/none.txt', 'read'),
    ).rejects.toMatchObject({
      reason: 'missing',
      message: 'No such file: r/a/none.txt',
    });
  });

  it('a folder swapped for a link in the middle of the walk: the walk goes on in the folder it opened', async () => {
    const rootDir = await ContainedDir.openRoot(root, 'r');
    const a = await rootDir.openDir('a');
    // The swap happens between two steps of the walk.
    renameSync(join(root, 'a'), join(root, 'a.old'));
    symlinkSync(outside, join(root, 'a'));
    const b = await a.openDir('b');
    const handle = await b.openFile('file.txt', 'read');
    expect(await handle.readFile('utf8')).toBe('inside');
    await handle.close();
    // A fresh walk refuses the link now in its place.
    await expect(rootDir.openDir('a')).rejects.toThrow(/symbolic link/);
    await Promise.all([b.close(), a.close(), rootDir.close()]);
    outsideUntouched();
  });

  it('creates in the parent it opened even when that parent is swapped for a link', async () => {
    const { dir, name } = await openParentBeneath(root, 'r', 'a/b/new.txt');
    renameSync(join(root, 'a', 'b'), join(root, 'a', 'b.old'));
    symlinkSync(join(outside, 'b'), join(root, 'a', 'b'));
    const handle = await dir.openFile(name, 'create');
    await handle.writeFile('written');
    await handle.close();
    await dir.close();
    expect(readFileSync(join(root, 'a', 'b.old', 'new.txt'), 'utf8')).toBe(
      'written',
    );
    outsideUntouched();
  });

  it('replaces a file by rename inside the opened parent, even if the parent is swapped mid-write', async () => {
    await replaceFileBeneath(root, 'r', 'a/b/file.txt', async (handle) => {
      renameSync(join(root, 'a', 'b'), join(root, 'a', 'b.old'));
      symlinkSync(join(outside, 'b'), join(root, 'a', 'b'));
      await handle.writeFile('replaced');
    });
    expect(readFileSync(join(root, 'a', 'b.old', 'file.txt'), 'utf8')).toBe(
      'replaced',
    );
    expect(readdirSync(join(root, 'a', 'b.old'))).toEqual(['file.txt']);
    outsideUntouched();
  });

  it('mkdir on the way never goes through a link', async () => {
    symlinkSync(outside, join(root, 'l'));
    await expect(
      openDirBeneath(root, 'r', 'l/new/deeper', { create: true }),
    ).rejects.toThrow(/symbolic link/);
    outsideUntouched();
  });

  it('remove: a link is unlinked itself, a folder is emptied without following links inside it', async () => {
    symlinkSync(outside, join(root, 'a', 'b', 'out'));
    symlinkSync(join(outside, 'file.txt'), join(root, 'flink'));
    const dir = await ContainedDir.openRoot(root, 'r');
    await dir.remove('flink');
    await dir.remove('a');
    await expect(dir.remove('a')).rejects.toBeInstanceOf(FileAccessError);
    await dir.close();
    expect(readdirSync(root)).toEqual(['top.txt']);
    outsideUntouched();
  });

  it('rename between two opened folders replaces a link at the target, never its target', async () => {
    symlinkSync(join(outside, 'file.txt'), join(root, 'a', 'dest'));
    const from = await ContainedDir.openRoot(root, 'r');
    const to = await from.openDir('a');
    await from.rename('top.txt', to, 'dest');
    await Promise.all([from.close(), to.close()]);
    expect(readFileSync(join(root, 'a', 'dest'), 'utf8')).toBe('top');
    outsideUntouched();
  });

  it('refuses names that are not one component', async () => {
    const dir = await ContainedDir.openRoot(root, 'r');
    for (const name of ['..', '.', '', 'a/b', 'x\0'])
      expect(() => dir.entryPath(name)).toThrow(FileAccessError);
    await dir.close();
  });
});
