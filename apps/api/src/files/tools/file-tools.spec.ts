import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileDirs } from '../file-dirs';
import { READ_FILE_MAX_BYTES, WRITE_FILE_MAX_BYTES } from '../file-limits';
import { ReadFileTool } from './read-file.tool';
import { WriteFileTool } from './write-file.tool';
import { fixedSecrets } from '../../secrets/fixed-secrets';

const STORED_SECRET = 'sk-stored-Secret-0123456789';

describe('read_file and write_file (real files)', () => {
  let dataDir: string;
  let dirs: FileDirs;
  let real: Record<'file_cache_dir' | 'file_state_dir', string>;
  let readTool: ReadFileTool;
  let writeTool: WriteFileTool;
  let outside: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'file-tools-'));
    dirs = new FileDirs({ dataDir });
    real = dirs.ensure();
    readTool = new ReadFileTool(dirs, fixedSecrets([STORED_SECRET]));
    writeTool = new WriteFileTool(dirs, fixedSecrets([STORED_SECRET]));
    outside = join(dataDir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'owner secret');
    writeFileSync(join(dataDir, 'secrets.json'), '{"key":"sk-x"}');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const read = async (path: string) =>
    JSON.parse(await readTool.execute({ path }));
  const write = async (
    path: string,
    content: string,
    mode?: 'overwrite' | 'append',
  ) => JSON.parse(await writeTool.execute({ path, content, mode }));

  describe('write_file', () => {
    it('writes a relative path to the cache dir, creating its parents', async () => {
      expect(await write('notes/today/plan.md', '# Plan\n')).toEqual({
        path: 'file_cache_dir/notes/today/plan.md',
        bytes: 7,
        mode: 'overwrite',
        size: 7,
        max_bytes: WRITE_FILE_MAX_BYTES,
      });
      expect(
        readFileSync(join(real.file_cache_dir, 'notes/today/plan.md'), 'utf8'),
      ).toBe('# Plan\n');
    });

    it('overwrites, then appends, in the state dir through its alias', async () => {
      await write('file_state_dir/log.txt', 'a long first line\n');
      await write('file_state_dir/log.txt', 'one\n');
      const appended = await write('file_state_dir/log.txt', 'two\n', 'append');
      expect(appended).toMatchObject({
        path: 'file_state_dir/log.txt',
        bytes: 4,
        mode: 'append',
        size: 8,
      });
      expect(readFileSync(join(real.file_state_dir, 'log.txt'), 'utf8')).toBe(
        'one\ntwo\n',
      );
    });

    it('counts the limit in bytes: 512 KiB is accepted, one byte more is refused and nothing is written', async () => {
      const max = 'x'.repeat(WRITE_FILE_MAX_BYTES);
      expect(await write('big.txt', max)).toMatchObject({
        bytes: WRITE_FILE_MAX_BYTES,
      });
      // 'é' is two bytes in UTF-8: under the limit in characters, over it in bytes.
      const over = 'é'.repeat(WRITE_FILE_MAX_BYTES / 2) + 'x';
      expect(await write('big.txt', over)).toEqual({
        error: `content too large (${WRITE_FILE_MAX_BYTES + 1} bytes > ${WRITE_FILE_MAX_BYTES} max): nothing was written; write it in parts with mode "append"`,
      });
      expect(await write('other.txt', over, 'append')).toHaveProperty('error');
      expect(
        readFileSync(join(real.file_cache_dir, 'big.txt'), 'utf8').length,
      ).toBe(WRITE_FILE_MAX_BYTES);
      expect(existsSync(join(real.file_cache_dir, 'other.txt'))).toBe(false);
    });

    it.each([
      ['../secrets.json'],
      ['../../outside/secret.txt'],
      ['file_cache_dir/../state/../../secrets.json'],
      ['file_state_dir/../../secrets.json'],
      ['/etc/metatron-test'],
      ['file_cache_dir'],
      ['file_state_dir/'],
      [''],
    ])('refuses %j and writes nothing', async (path) => {
      const result = await write(path, 'pwned');
      expect(result.error).toEqual(expect.any(String));
      expect(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).toBe(
        '{"key":"sk-x"}',
      );
      expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(
        'owner secret',
      );
      expect(existsSync('/etc/metatron-test')).toBe(false);
    });

    it('does not write through symlinks that lead out (file, folder, dangling)', async () => {
      symlinkSync(
        join(outside, 'secret.txt'),
        join(real.file_cache_dir, 'link.txt'),
      );
      symlinkSync(outside, join(real.file_cache_dir, 'out'));
      symlinkSync(
        join(outside, 'new.txt'),
        join(real.file_cache_dir, 'dangling.txt'),
      );
      for (const path of [
        'link.txt',
        'out/secret.txt',
        'out/new/x.txt',
        'dangling.txt',
      ])
        expect(await write(path, 'pwned', 'append')).toHaveProperty('error');
      expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(
        'owner secret',
      );
      expect(existsSync(join(outside, 'new.txt'))).toBe(false);
      expect(existsSync(join(outside, 'new'))).toBe(false);
    });

    it('refuses a path whose parent is a file', async () => {
      await write('plain', 'x');
      expect(await write('plain/child.txt', 'y')).toEqual({
        error: 'file_cache_dir/plain is not a directory',
      });
    });

    it('refuses a directory and a FIFO without blocking', async () => {
      mkdirSync(join(real.file_cache_dir, 'folder'));
      expect(await write('folder', 'x')).toEqual({
        error: 'file_cache_dir/folder is a directory, not a file',
      });
      execFileSync('mkfifo', [join(real.file_cache_dir, 'pipe')]);
      expect(await read('pipe')).toEqual({
        error: 'file_cache_dir/pipe is not a regular file',
      });
    });
  });

  describe('read_file', () => {
    it('reads a text file by alias, relative path and real path', async () => {
      writeFileSync(join(real.file_state_dir, 'TODO.md'), '- [ ] milk\n');
      writeFileSync(join(real.file_cache_dir, 'page.txt'), 'héllo');
      expect(await read('file_state_dir/TODO.md')).toEqual({
        path: 'file_state_dir/TODO.md',
        content: '- [ ] milk\n',
        bytes: 11,
        truncated: false,
      });
      expect(await read('page.txt')).toMatchObject({
        path: 'file_cache_dir/page.txt',
        content: 'héllo',
        bytes: 6,
      });
      expect(await read(join(real.file_state_dir, 'TODO.md'))).toMatchObject({
        content: '- [ ] milk\n',
      });
    });

    it('returns at most 256 KiB with a note, never splitting a character', async () => {
      // One byte, then 3-byte characters: the cap falls in the middle of one.
      const text = 'a' + '€'.repeat(100_000);
      writeFileSync(join(real.file_cache_dir, 'long.txt'), text);
      const result = await read('long.txt');
      const size = Buffer.byteLength(text);
      expect(result.truncated).toBe(true);
      expect(result.bytes).toBe(size);
      expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(
        READ_FILE_MAX_BYTES,
      );
      expect(Buffer.byteLength(result.content)).toBeGreaterThan(
        READ_FILE_MAX_BYTES - 3,
      );
      expect(result.content).not.toContain('\uFFFD');
      expect(text.startsWith(result.content)).toBe(true);
      expect(result.note).toBe(
        `Only the first 256 KiB of ${size} bytes are shown; use bash (e.g. tail, sed -n, grep) to read further.`,
      );
      writeFileSync(
        join(real.file_cache_dir, 'exact.txt'),
        'x'.repeat(READ_FILE_MAX_BYTES),
      );
      expect(await read('exact.txt')).toMatchObject({
        truncated: false,
        bytes: READ_FILE_MAX_BYTES,
      });
    });

    it('refuses binary files with a clear error instead of garbage', async () => {
      writeFileSync(
        join(real.file_cache_dir, 'image.png'),
        Buffer.from([
          0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13,
        ]),
      );
      writeFileSync(
        join(real.file_cache_dir, 'latin1.txt'),
        Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x21]),
      );
      expect(await read('image.png')).toEqual({
        error:
          'file_cache_dir/image.png is not a text file (12 bytes of binary data): read_file returns text only. Use bash to inspect it (e.g. `file` or `xxd | head`).',
      });
      expect((await read('latin1.txt')).error).toMatch(/is not a text file/);
    });

    it.each([
      ['../secrets.json'],
      ['file_cache_dir/../../secrets.json'],
      ['file_state_dir/../../outside/secret.txt'],
      ['/etc/passwd'],
      ['link.txt'],
      ['out/secret.txt'],
      ['file_state_dir'],
    ])('refuses %j', async (path) => {
      symlinkSync(
        join(outside, 'secret.txt'),
        join(real.file_cache_dir, 'link.txt'),
      );
      symlinkSync(outside, join(real.file_cache_dir, 'out'));
      const result = await read(path);
      expect(result.error).toEqual(expect.any(String));
      expect(JSON.stringify(result)).not.toContain('owner secret');
      expect(JSON.stringify(result)).not.toContain('sk-x');
    });

    it('says when a file is missing', async () => {
      expect(await read('file_state_dir/nothing.md')).toEqual({
        error: 'No such file: file_state_dir/nothing.md',
      });
    });
  });

  describe('stored secrets', () => {
    const forms = [
      ['plain', STORED_SECRET],
      ['reversed', [...STORED_SECRET].reverse().join('')],
      ['base64', Buffer.from(`x${STORED_SECRET}`).toString('base64')],
      ['base64url', Buffer.from(`xy${STORED_SECRET}`).toString('base64url')],
      ['hex', Buffer.from(STORED_SECRET).toString('hex').toUpperCase()],
    ];

    it.each(forms)(
      'write_file refuses content with one, %s, and writes nothing',
      async (_form, text) => {
        expect(await write('leak.txt', `key: ${text}\n`)).toEqual({
          error: expect.stringMatching(
            /content carries a secret the owner stored/,
          ),
        });
        expect(existsSync(join(real.file_cache_dir, 'leak.txt'))).toBe(false);
      },
    );

    it.each(forms)(
      'read_file redacts one a file holds, %s',
      async (_form, text) => {
        writeFileSync(
          join(real.file_cache_dir, 'echo.txt'),
          `got ${text} back`,
        );
        const result = await read('echo.txt');
        expect(result.content).toMatch(/^got \S*\[redacted secret\]\S* back$/);
        expect(result.content).not.toContain(text);
        expect(result.redacted).toEqual(expect.any(String));
      },
    );
  });
});
