import {
  existsSync,
  mkdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type TestAgent from 'supertest/lib/agent';
import { createTestApp, type TestApp } from './support/test-app';

describe('Files API', () => {
  let t: TestApp;
  let owner: TestAgent;
  let state: string;
  let cache: string;
  let outside: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    state = join(t.config.dataDir, 'files', 'state');
    cache = join(t.config.dataDir, 'files', 'cache');
    outside = join(t.config.dataDir, 'outside');
    mkdirSync(state, { recursive: true });
    mkdirSync(cache, { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), 'owner secret');
    writeFileSync(join(state, 'notes.md'), '# Notes\nhello\n');
    mkdirSync(join(state, 'reports'));
    writeFileSync(join(state, 'reports', 'q1.csv'), 'a,b\n1,2\n');
    writeFileSync(join(cache, 'blob.bin'), Buffer.from([0, 1, 2, 3]));
    writeFileSync(join(cache, 'große datei.txt'), 'x'.repeat(600 * 1024));
    symlinkSync(outside, join(state, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(cache, 'secret-link'));
    symlinkSync(join(state, 'notes.md'), join(state, 'notes-link'));
  });
  afterAll(() => t.close());

  it('needs the owner session', async () => {
    await t.http().get('/api/files').expect(401);
    await t
      .http()
      .get('/api/files/content?path=file_state_dir/notes.md')
      .expect(401);
    await t
      .http()
      .delete('/api/files?path=file_state_dir/notes.md')
      .expect(401);
    await t.http().get('/api/files/todo').expect(401);
    expect(existsSync(join(state, 'notes.md'))).toBe(true);
  });

  it('lists the two dirs without a path', async () => {
    const { body } = await owner.get('/api/files').expect(200);
    expect(body.path).toBe('');
    expect(
      body.entries.map((e: { name: string; kind: string }) => [e.name, e.kind]),
    ).toEqual([
      ['file_cache_dir', 'dir'],
      ['file_state_dir', 'dir'],
    ]);
  });

  it('lists a dir: directories first, sizes and dates, no link (links are never followed)', async () => {
    const { body } = await owner
      .get('/api/files?path=file_state_dir')
      .expect(200);
    expect(body.path).toBe('file_state_dir');
    expect(body.entries).toEqual([
      expect.objectContaining({
        name: 'reports',
        kind: 'dir',
        size: 0,
        path: 'file_state_dir/reports',
      }),
      expect.objectContaining({
        name: 'notes.md',
        kind: 'file',
        size: 14,
        path: 'file_state_dir/notes.md',
      }),
    ]);
    expect(Number.isNaN(Date.parse(body.entries[0].modifiedAt))).toBe(false);
    const nested = await owner
      .get('/api/files?path=file_state_dir/reports')
      .expect(200);
    expect(nested.body.entries).toEqual([
      expect.objectContaining({
        name: 'q1.csv',
        path: 'file_state_dir/reports/q1.csv',
        size: 8,
      }),
    ]);
    const cached = await owner
      .get('/api/files?path=file_cache_dir')
      .expect(200);
    expect(cached.body.entries.map((e: { name: string }) => e.name)).toEqual([
      'blob.bin',
      'große datei.txt',
    ]);
  });

  it.each([
    ['file_state_dir/../../outside'],
    ['file_state_dir/escape'],
    ['file_state_dir/escape/secret.txt'],
    ['file_cache_dir/secret-link'],
    ['../outside/secret.txt'],
    ['/etc/passwd'],
    [(t) => join(t.config.dataDir, 'outside', 'secret.txt')],
    ['notes.md'],
    ['file_state_dir/a\0b'],
  ] as Array<[string | ((t: TestApp) => string)]>)(
    'refuses %p on every route with 400',
    async (given) => {
      const path = typeof given === 'function' ? given(t) : given;
      const q = encodeURIComponent(path);
      const list = await owner.get(`/api/files?path=${q}`).expect(400);
      expect(list.body.message).toEqual(expect.any(String));
      const read = await owner.get(`/api/files/content?path=${q}`).expect(400);
      expect(read.text).not.toContain('owner secret');
      await owner.get(`/api/files/content?path=${q}&inline=1`).expect(400);
      await owner.delete(`/api/files?path=${q}`).expect(400);
      expect(existsSync(join(outside, 'secret.txt'))).toBe(true);
    },
  );

  it('never reads through a link, even one that stays inside the dirs', async () => {
    const read = await owner
      .get('/api/files/content?path=file_state_dir/notes-link')
      .expect(400);
    expect(read.body.message).toBe(
      'file_state_dir/notes-link is a symbolic link: files are never opened through links',
    );
    await owner.get('/api/files?path=file_state_dir/notes-link').expect(400);
  });

  it('answers 404 for a missing file or dir', async () => {
    const missing = await owner
      .get('/api/files/content?path=file_state_dir/nope.md')
      .expect(404);
    expect(missing.body.message).toBe(
      'No such file or directory: file_state_dir/nope.md',
    );
    await owner.get('/api/files?path=file_state_dir/nope').expect(404);
    await owner.delete('/api/files?path=file_cache_dir/nope').expect(404);
  });

  it('downloads a file as an attachment', async () => {
    const res = await owner
      .get(
        `/api/files/content?path=${encodeURIComponent('file_cache_dir/große datei.txt')}`,
      )
      .expect(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toMatch(/^attachment; /);
    expect(res.headers['content-disposition']).toContain(
      "filename*=UTF-8''gro%C3%9Fe%20datei.txt",
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(Number(res.headers['content-length'])).toBe(600 * 1024);
  });

  it('shows a text file inline, and refuses binary or large ones inline', async () => {
    const res = await owner
      .get('/api/files/content?path=file_state_dir/notes.md&inline=1')
      .expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('# Notes\nhello\n');
    await owner
      .get('/api/files/content?path=file_cache_dir/blob.bin&inline=1')
      .expect(415);
    await owner
      .get(
        `/api/files/content?path=${encodeURIComponent('file_cache_dir/große datei.txt')}&inline=1`,
      )
      .expect(413);
    await owner
      .get('/api/files/content?path=file_state_dir/reports')
      .expect(400);
    await owner
      .get('/api/files/content?path=file_state_dir/notes.md&inline=yes')
      .expect(400);
    await owner.get('/api/files/content').expect(400);
  });

  it('serves an empty file', async () => {
    writeFileSync(join(state, 'empty.txt'), '');
    const res = await owner
      .get('/api/files/content?path=file_state_dir/empty.txt&inline=1')
      .expect(200);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe('0');
    await owner.delete('/api/files?path=file_state_dir/empty.txt').expect(204);
  });

  it('deletes a link itself, never its target', async () => {
    await owner.delete('/api/files?path=file_state_dir/notes-link').expect(204);
    expect(existsSync(join(state, 'notes-link'))).toBe(false);
    expect(existsSync(join(state, 'notes.md'))).toBe(true);
  });

  it('deletes files and directories but never a dir itself', async () => {
    await owner.delete('/api/files?path=file_state_dir').expect(400);
    await owner.delete('/api/files?path=file_state_dir/').expect(400);
    await owner.delete('/api/files?path=file_state_dir/reports/..').expect(400);
    expect(existsSync(state)).toBe(true);
    await owner.delete('/api/files?path=file_state_dir/reports').expect(204);
    expect(existsSync(join(state, 'reports'))).toBe(false);
    await owner.delete('/api/files?path=file_cache_dir/blob.bin').expect(204);
    expect(existsSync(join(cache, 'blob.bin'))).toBe(false);
    expect(readlinkSync(join(state, 'escape'))).toBe(outside);
  });

  it('serves the TODO lists parsed from the state dir', async () => {
    expect((await owner.get('/api/files/todo').expect(200)).body).toEqual({
      open: [],
      done: [],
    });
    writeFileSync(
      join(state, 'TODO.md'),
      '# TODO (open)\n\n- [ ] [Created](2026-02-09 10:00), [ChatID](wa:14155551234) | Call the plumber\n- [ ] buy milk\n',
    );
    writeFileSync(
      join(state, 'TODO.DONE.md'),
      '- [x] [Created](2026-02-08 09:00), [Done](2026-02-09 11:00) | Renew the passport\n',
    );
    expect((await owner.get('/api/files/todo').expect(200)).body).toEqual({
      open: [
        {
          content: 'Call the plumber',
          createdAt: '2026-02-09 10:00',
          chatId: 'wa:14155551234',
        },
        { content: 'buy milk', createdAt: '' },
      ],
      done: [
        {
          content: 'Renew the passport',
          createdAt: '2026-02-08 09:00',
          doneAt: '2026-02-09 11:00',
        },
      ],
    });
  });
});
