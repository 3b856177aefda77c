import * as http from 'node:http';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type TestAgent from 'supertest/lib/agent';
import {
  startFakeTelegram,
  type FakeTelegramServer,
} from '../../../tools/fake-telegram/fake-telegram-server';
import type { AiToolContext } from '../src/ai-tools/ai-tool';
import { parseToolArguments } from '../src/ai-tools/tool-argument-schema';
import { BashTool } from '../src/files/bash/bash.tool';
import { FileDirs } from '../src/files/file-dirs';
import { ReadFileTool } from '../src/files/tools/read-file.tool';
import { SettingsService } from '../src/settings/settings.service';
import { TelegramSendFileTool } from '../src/telegram/telegram-tools';
import { UrlFetchTool } from '../src/url-fetch/url-fetch.tool';
import { createTestApp, type TestApp } from './support/test-app';

/**
 * The attacks of issue 24 parts 1 and 2, with real parts: the app over its real
 * database, a loopback HTTP server that holds its answer until the test has swapped
 * a folder (no loop hoping to win a race), the real bwrap shell through the bash
 * tool, and the fake Telegram Bot API.
 */

const PROFILE_VALUE = 'Bearer ghp-echoed-profile-Value-4411';
const TOKEN = '123456:RACE-token-abcdefghijklmnop';

/** A promise and its resolver: the server waits on it, the test opens it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('file races and secrets through files (issue 24)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let server: http.Server;
  let base: string;
  let cache: string;
  let outside: string;
  /** Per route: what the server does once a request came in. */
  const routes: Record<
    string,
    (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>
  > = {};
  /** Opens when a request reached the server (the app checked the path before it). */
  let arrived = gate();

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    server = http.createServer((req, res) => {
      arrived.open();
      const route = routes[(req.url ?? '/').split('?')[0]];
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      void route(req, res);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    await owner
      .patch('/api/settings')
      .send({
        urlFetchAllowHosts: [`127.0.0.1:${port}`],
        authProfiles: [
          {
            id: 'home',
            urlPrefix: `${base}/`,
            header: 'Authorization',
            value: PROFILE_VALUE,
          },
        ],
      })
      .expect(200);
    cache = t.app.get(FileDirs).ensure().file_cache_dir;
    outside = join(t.config.dataDir, 'outside');
    mkdirSync(outside);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    await t.close();
  });
  beforeEach(() => {
    arrived = gate();
  });

  async function context(): Promise<AiToolContext> {
    return {
      source: 'chat',
      settings: await t.app.get(SettingsService).get(),
      chatId: null,
      messageId: null,
      signal: new AbortController().signal,
    };
  }

  async function run(
    tool: { schema: Parameters<typeof parseToolArguments>[0] } & {
      execute(args: never, context: AiToolContext): Promise<string>;
    },
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const parsed = parseToolArguments(tool.schema, args);
    if (!parsed.ok) return { error: parsed.error };
    return JSON.parse(
      await tool.execute(parsed.args as never, await context()),
    ) as Record<string, unknown>;
  }

  const fetchTool = (args: Record<string, unknown>) =>
    run(t.app.get(UrlFetchTool), args);
  const bash = (cmd: string) => run(t.app.get(BashTool), { cmd });
  const readFile = (path: string) => run(t.app.get(ReadFileTool), { path });

  /** Swaps `cache/<name>` for a link to the outside folder, as `mv && ln -s` in the sandbox would. */
  const swapForLink = (name: string) => {
    renameSync(join(cache, name), join(cache, `${name}.old`));
    symlinkSync(outside, join(cache, name));
  };

  describe('url_fetch download_path, the folder swapped for a link', () => {
    it('after the check, before the answer: refused, nothing written outside', async () => {
      mkdirSync(join(cache, 'dl1'));
      const release = gate();
      routes['/held'] = async (_req, res) => {
        await release.opened;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ssh-ed25519 AAAA attacker');
      };
      const pending = fetchTool({
        url: `${base}/held`,
        download_path: 'dl1/authorized_keys',
      });
      // The path was checked before the request left; swap it now.
      await arrived.opened;
      swapForLink('dl1');
      release.open();
      const result = await pending;
      expect(result['error']).toMatch(/dl1 is a symbolic link/);
      expect(readdirSync(outside)).toEqual([]);
      expect(readdirSync(join(cache, 'dl1.old'))).toEqual([]);
    });

    it('while the body streams: the rest goes to the folder that was opened, never outside', async () => {
      mkdirSync(join(cache, 'dl2'));
      const rest = gate();
      routes['/slow'] = async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write('first half;');
        await rest.opened;
        res.end('second half');
      };
      const pending = fetchTool({
        url: `${base}/slow`,
        download_path: 'dl2/authorized_keys',
      });
      // The partial file exists once the first bytes were written through the opened folder.
      await waitFor(
        () => readdirSync(join(cache, 'dl2')).some((n) => n.includes('.part')),
        'the partial file',
      );
      swapForLink('dl2');
      rest.open();
      const result = await pending;
      expect(result).toMatchObject({
        path: 'file_cache_dir/dl2/authorized_keys',
      });
      expect(readdirSync(outside)).toEqual([]);
      expect(
        readFileSync(join(cache, 'dl2.old', 'authorized_keys'), 'utf8'),
      ).toBe('first half;second half');
    });

    it('swapped from a real bwrap shell by the bash tool: nothing written outside', async () => {
      // bwrap is a dependency of the bash tool; the bash sandbox spec fails where it is missing.
      expect(await t.app.get(BashTool).isAvailable()).toBe(true);
      expect(await bash('mkdir file_cache_dir/dl3')).toMatchObject({
        exit_code: 0,
      });
      const release = gate();
      routes['/held-bash'] = async (_req, res) => {
        await release.opened;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ssh-ed25519 AAAA attacker');
      };
      const pending = fetchTool({
        url: `${base}/held-bash`,
        download_path: 'dl3/authorized_keys',
      });
      await arrived.opened;
      // The sandbox cannot see `outside`, but a link it makes may name it.
      expect(
        await bash(
          `mv file_cache_dir/dl3 file_cache_dir/dl3.old && ln -s ${outside} file_cache_dir/dl3`,
        ),
      ).toMatchObject({ exit_code: 0 });
      release.open();
      expect((await pending)['error']).toMatch(/dl3 is a symbolic link/);
      expect(readdirSync(outside)).toEqual([]);
    });
  });

  describe('an auth profile value echoed back and saved', () => {
    beforeAll(() => {
      routes['/echo'] = async (req, res) => {
        const value = req.headers.authorization ?? '';
        res.writeHead(200, { 'content-type': 'application/json' });
        // Plain, and base64 as some services echo credentials.
        res.end(
          JSON.stringify({
            headers: { authorization: value },
            b64: Buffer.from(value).toString('base64'),
          }),
        );
      };
    });

    it('is redacted inline', async () => {
      const result = await fetchTool({
        url: `${base}/echo`,
        auth_profile: 'home',
      });
      expect(JSON.stringify(result)).not.toContain(PROFILE_VALUE);
      expect(String(result['body'])).toContain('[redacted secret]');
    });

    it('is redacted before the file touches the disk, and never comes back through read_file or bash', async () => {
      const saved = await fetchTool({
        url: `${base}/echo`,
        auth_profile: 'home',
        download_path: 'echo/headers.json',
      });
      expect(saved).toMatchObject({ path: 'file_cache_dir/echo/headers.json' });
      const onDisk = readFileSync(join(cache, 'echo', 'headers.json'), 'utf8');
      expect(onDisk).not.toContain('ghp-echoed');
      expect(onDisk).not.toContain(
        Buffer.from(PROFILE_VALUE).toString('base64').slice(4, 30),
      );
      expect(onDisk).toContain('[redacted secret]');

      const read = await readFile('file_cache_dir/echo/headers.json');
      expect(JSON.stringify(read)).not.toContain('ghp-echoed');

      // Planted by other means (not through url_fetch): every way back out is redacted.
      writeFileSync(
        join(cache, 'echo', 'planted.txt'),
        `authorization: ${PROFILE_VALUE}\n`,
      );
      for (const cmd of [
        'cat file_cache_dir/echo/planted.txt',
        'rev file_cache_dir/echo/planted.txt',
        'base64 file_cache_dir/echo/planted.txt',
        'base64 -w0 file_cache_dir/echo/planted.txt | rev',
        'xxd -p file_cache_dir/echo/planted.txt',
        'rev file_cache_dir/echo/planted.txt > file_cache_dir/echo/rev.txt',
      ]) {
        const result = await bash(cmd);
        expect(result['exit_code']).toBe(0);
        const seen = String(result['output']).replace(/\s/g, '');
        for (const form of [
          'ghp-echoed-profile-Value-4411',
          [...'ghp-echoed-profile-Value-4411'].reverse().join(''),
          Buffer.from('ghp-echoed-profile-Value-4411').toString('hex'),
        ])
          expect(seen).not.toContain(form);
      }
      const reversed = await readFile('file_cache_dir/echo/rev.txt');
      expect(String(reversed['content'])).toContain('[redacted secret]');
      expect(JSON.stringify(reversed)).not.toContain('1144-eulaV');
    });

    it('write_file refuses it', async () => {
      const tool = t.app.get(
        (await import('../src/files/tools/write-file.tool')).WriteFileTool,
      );
      const result = await run(tool, {
        path: 'leak.txt',
        content: Buffer.from(PROFILE_VALUE).toString('hex'),
      });
      expect(result['error']).toMatch(/secret the owner stored/);
      expect(existsSync(join(cache, 'leak.txt'))).toBe(false);
    });
  });

  describe('telegram_send_file against the fake Bot API', () => {
    let telegram: FakeTelegramServer;
    const DB_MARK = 'SQLite format 3 — token inside';

    beforeAll(async () => {
      telegram = await startFakeTelegram({ tokens: [TOKEN] });
      await owner
        .patch('/api/settings')
        .send({ telegramBotToken: TOKEN, telegramApiRoot: telegram.url })
        .expect(200);
      const deadline = Date.now() + 10_000;
      while (
        (await owner.get('/api/telegram/status')).body.status !== 'connected'
      ) {
        if (Date.now() > deadline) throw new Error('the bot did not connect');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await owner
        .post('/api/telegram/permissions')
        .send({
          chatId: '4242',
          displayName: 'Ann',
          canRead: true,
          canReply: true,
        })
        .expect(200);
      // Stands in for DATA_DIR/db: a file there must never be uploaded.
      const db = join(t.config.dataDir, 'db');
      mkdirSync(db, { recursive: true });
      writeFileSync(join(db, 'report.txt'), DB_MARK);
    });
    afterAll(async () => {
      await owner
        .patch('/api/settings')
        .send({ telegramBotToken: '' })
        .expect(200);
      await telegram.close();
    });

    const send = (path: string) =>
      run(t.app.get(TelegramSendFileTool), { path, chat_id: '4242' });

    it('a folder swapped for a link to DATA_DIR/db between the check and the upload: the db is never uploaded', async () => {
      mkdirSync(join(cache, 'out'));
      writeFileSync(join(cache, 'out', 'report.txt'), 'the real report');
      const tool = t.app.get(TelegramSendFileTool);
      type Hooked = { target: (...args: unknown[]) => Promise<unknown> };
      const hooked = tool as unknown as Hooked;
      const original = hooked.target.bind(tool);
      let swapped = false;
      // The hook: the chat lookup runs after the file check and before the upload.
      const spy = jest
        .spyOn(hooked, 'target')
        .mockImplementationOnce(async (...args: unknown[]) => {
          renameSync(join(cache, 'out'), join(cache, 'out.old'));
          symlinkSync(join(t.config.dataDir, 'db'), join(cache, 'out'));
          swapped = true;
          return original(...args);
        });
      const before = telegram.uploads.length;
      try {
        await send('file_cache_dir/out/report.txt');
      } finally {
        spy.mockRestore();
      }
      expect(swapped).toBe(true);
      const uploads = telegram.uploads.slice(before);
      for (const upload of uploads) expect(upload.raw).not.toContain('SQLite');
      // What was checked is what is sent.
      expect(uploads).toHaveLength(1);
      expect(uploads[0].raw).toContain('the real report');
    });

    it('a folder that is a link to DATA_DIR/db already: refused', async () => {
      symlinkSync(join(t.config.dataDir, 'db'), join(cache, 'db-link'));
      const before = telegram.uploads.length;
      const result = await send('file_cache_dir/db-link/report.txt');
      expect(result['error']).toEqual(expect.any(String));
      expect(telegram.uploads.length).toBe(before);
    });
  });
});
