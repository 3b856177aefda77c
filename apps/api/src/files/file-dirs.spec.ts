import {
  mkdtempSync,
  mkdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileDirs } from './file-dirs';

describe('FileDirs', () => {
  let dataDir: string;
  let dirs: FileDirs;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'file-dirs-'));
    dirs = new FileDirs({ dataDir });
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('resolves both aliases, and a relative path to the cache dir', () => {
    const state = dirs.resolve('file_state_dir/notes/TODO.md');
    expect(state).toMatchObject({
      ok: true,
      alias: 'file_state_dir',
      relative: 'notes/TODO.md',
      display: 'file_state_dir/notes/TODO.md',
    });
    expect(dirs.resolve('report.txt')).toMatchObject({
      ok: true,
      alias: 'file_cache_dir',
      display: 'file_cache_dir/report.txt',
    });
    expect(
      dirs.resolve('a.txt', { defaultAlias: 'file_state_dir' }),
    ).toMatchObject({
      alias: 'file_state_dir',
    });
  });

  it('refuses the bare alias unless a directory is wanted', () => {
    expect(dirs.resolve('file_cache_dir')).toMatchObject({ ok: false });
    expect(dirs.resolve('file_cache_dir/')).toMatchObject({ ok: false });
    expect(dirs.resolve('file_cache_dir', { allowDir: true })).toMatchObject({
      ok: true,
      relative: '',
      display: 'file_cache_dir',
    });
  });

  it.each([
    ['file_cache_dir/../../secrets.json'],
    ['../db/metatron.sqlite'],
    ['file_state_dir/../cache/../../x'],
    ['/etc/passwd'],
    [''],
    ['a\0b'],
  ])('refuses %j', (path) => {
    expect(dirs.resolve(path)).toMatchObject({ ok: false });
  });

  it('accepts an absolute path inside a dir and refuses symlinks that lead out', () => {
    const real = dirs.ensure();
    expect(dirs.resolve(join(real.file_state_dir, 'x.md'))).toMatchObject({
      ok: true,
      alias: 'file_state_dir',
      relative: 'x.md',
    });
    const outside = join(dataDir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret'), 'no');
    symlinkSync(outside, join(real.file_cache_dir, 'link'));
    expect(dirs.resolve('file_cache_dir/link/secret')).toMatchObject({
      ok: false,
    });
    expect(dirs.resolve('link/new-file')).toMatchObject({ ok: false });
    symlinkSync(
      join(outside, 'missing'),
      join(real.file_cache_dir, 'dangling'),
    );
    expect(dirs.resolve('file_cache_dir/dangling')).toMatchObject({
      ok: false,
    });
    symlinkSync(real.file_state_dir, join(real.file_cache_dir, 'to-state'));
    expect(dirs.resolve('file_cache_dir/to-state/x')).toMatchObject({
      ok: false,
    });
  });

  it('expands aliases at word starts in a command', () => {
    const real = dirs.ensure();
    expect(
      dirs.expandAliases('ls file_cache_dir/a && cat "file_state_dir/b"'),
    ).toBe(`ls ${real.file_cache_dir}/a && cat "${real.file_state_dir}/b"`);
    expect(dirs.expandAliases('echo my_file_cache_dir/x')).toBe(
      'echo my_file_cache_dir/x',
    );
  });
});
