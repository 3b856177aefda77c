import type { ChatMessage, ChatSummary } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { mongo, type Connection } from 'mongoose';
import type { Response } from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { Header } from 'tar';
import { BackupLimits } from '../src/backup/backup-limits';
import { ChatList } from '../src/chats/chat-list';
import { SettingsService } from '../src/settings/settings.service';
import {
  OPENAI_TEST_KEY,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { openSse } from './support/sse';
import {
  createTestApp,
  OWNER_PASSWORD,
  type TestApp,
} from './support/test-app';
import { sharedTestDatabase } from './support/test-database';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** supertest: keep a binary body as one Buffer. */
function binary(
  res: Response,
  done: (error: Error | null, body: Buffer) => void,
) {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/** A .tar.gz written block by block, so a test can put in what no honest tool writes. */
function rawTarGz(
  entries: Array<{
    path: string;
    body?: string;
    type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
    linkpath?: string;
  }>,
): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    const header = Buffer.alloc(512);
    new Header({
      path: entry.path,
      mode: entry.type === 'Directory' ? 0o755 : 0o644,
      size: entry.type && entry.type !== 'File' ? 0 : body.length,
      type: entry.type ?? 'File',
      linkpath: entry.linkpath,
      mtime: new Date('2026-01-01T00:00:00Z'),
    }).encode(header, 0);
    blocks.push(header);
    if ((entry.type ?? 'File') === 'File' && body.length) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const EMPTY_MANIFEST = JSON.stringify({
  format: 'metatronos-backup',
  formatVersion: 1,
  appVersion: '0.1.0',
  createdAt: '2026-01-01T00:00:00.000Z',
  collections: [],
  dirs: [],
});

/**
 * A backup in the archive's own format (manifest + canonical Extended JSON, one
 * document a line), holding what the test puts in it.
 */
function craftedArchive(
  collections: Record<
    string,
    { docs: mongo.BSON.Document[]; indexes?: Record<string, unknown>[] }
  >,
): Buffer {
  const manifest = {
    format: 'metatronos-backup',
    formatVersion: 1,
    appVersion: '0.1.0',
    createdAt: '2026-01-01T00:00:00.000Z',
    collections: Object.entries(collections).map(([name, c]) => ({
      name,
      count: c.docs.length,
      indexes: c.indexes ?? [],
    })),
    dirs: [],
  };
  return rawTarGz([
    { path: 'manifest.json', body: JSON.stringify(manifest) },
    ...Object.entries(collections).map(([name, c]) => ({
      path: `db/${name}.ejson`,
      body: c.docs
        .map((d) => `${mongo.BSON.EJSON.stringify(d, { relaxed: false })}\n`)
        .join(''),
    })),
  ]);
}

const CHAT_ID = new mongo.ObjectId('65a000000000000000000001');
const goodChat = (id = CHAT_ID, title = 'Restored') => ({
  _id: id,
  title,
  createdAt: new Date('2026-01-01T00:00:00Z'),
  updatedAt: new Date('2026-01-01T00:00:00Z'),
});

/** Every file under DATA_DIR's data folders, with its content. */
function dataFiles(t: TestApp): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(t.config.dataDir, path)] = readFileSync(path, 'base64');
    }
  };
  for (const dir of ['media', 'attachments', 'files'])
    walk(join(t.config.dataDir, dir));
  return out;
}

/** What a refused restore must leave as it was: every collection's documents and the data files. */
async function snapshot(t: TestApp): Promise<unknown> {
  const db = t.app.get<Connection>(getConnectionToken()).db as mongo.Db;
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    // The memory index's cache token: rewritten whenever the index saves, never in a backup.
    .filter((name) => name !== 'memory_index')
    .sort();
  const collections: Record<string, unknown> = {};
  for (const name of names)
    collections[name] = mongo.BSON.EJSON.serialize(
      await db.collection(name).find({}).sort({ _id: 1 }).toArray(),
    );
  const owner = await t.owner();
  const settings = (await owner.get('/api/settings').expect(200)).body;
  return { collections, settings, files: dataFiles(t) };
}

describe('Backup and restore (/api/backup)', () => {
  let fake: Fake;
  let source: TestApp;
  let owner: TestAgent;
  let archive: Buffer;
  /** Made with PASSPHRASE: the secrets sealed in it. */
  let sealed: Buffer;
  const PASSPHRASE = 'correct horse battery staple';
  const SECRETS = [
    OPENAI_TEST_KEY,
    'BSA-backup-key-9876',
    'sk-local-endpoint-5555',
    'mcp-backup-header-7777',
  ];
  let chatId: string;
  let attachmentId: string;
  const note = 'Groceries: tea, bread.\n';

  beforeAll(async () => {
    fake = await startFakeProviders();
    source = await createTestApp();
    owner = await source.owner();
    await useModel(source, 'gpt-4.1-mini');
    await owner
      .patch('/api/settings')
      .send({
        timezone: 'Europe/Berlin',
        braveApiKey: 'BSA-backup-key-9876',
        openaiCompatible: [
          {
            name: 'local',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: 'sk-local-endpoint-5555',
          },
        ],
      })
      .expect(200);
    // An MCP server's header value is a secret like a key (nothing listens on port 9: loopback only).
    await owner
      .post('/api/mcp/servers')
      .send({
        name: 'backupmcp',
        url: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: 'Bearer mcp-backup-header-7777' },
        allowHosts: ['127.0.0.1:9'],
      })
      .expect(201);
    chatId = (
      await owner.post('/api/chats').send({ title: 'Trip' }).expect(201)
    ).body.id;
    attachmentId = (
      await owner
        .post('/api/attachments')
        .attach('file', Buffer.from('packing list: socks'), 'list.txt')
        .expect(201)
    ).body.id;
    const { url, cookie } = await source.serve();
    fake.openai.enqueue({ text: ['Socks noted.'] });
    const stream = await openSse(
      `${url}/api/chats/${chatId}/messages`,
      { Cookie: cookie },
      {
        method: 'POST',
        body: { content: 'see my list', attachmentIds: [attachmentId] },
      },
    );
    await stream.rest();
    const state = join(source.config.dataDir, 'files', 'state', 'notes');
    mkdirSync(state, { recursive: true });
    writeFileSync(join(state, 'groceries.md'), note);
    // Types the AI may store: a double that looks whole, a long, a date, binary.
    await source.app
      .get<Connection>(getConnectionToken())
      .db?.collection('ai_readings')
      .insertOne({
        _id: 'r1' as never,
        value: new mongo.Double(5),
        big: mongo.Long.fromString('9007199254740993'),
        at: new Date('2026-02-03T04:05:06.789Z'),
        raw: new mongo.Binary(Buffer.from([0, 1, 2, 255])),
      });
  });
  afterAll(async () => {
    await source?.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('downloads one .tar.gz of everything', async () => {
    const res = await owner
      .get('/api/backup')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="metatronos-backup-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}\.tar\.gz"/,
    );
    archive = res.body as Buffer;
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // Without a passphrase no secret is in it, in any form; nor is the owner password.
    const { gunzipSync } = await import('node:zlib');
    const tar = gunzipSync(archive).toString('latin1');
    for (const secret of SECRETS) {
      expect(tar).not.toContain(secret);
      expect(tar).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(tar).toContain('"included": false');
    expect(tar).toContain('"name":"local"');
    expect(tar).not.toContain('auth_owner');
    expect(tar).toContain('files/state/notes/groceries.md');
    expect(tar).toContain('"format": "metatronos-backup"');
  });

  it('seals the secrets with a passphrase (POST /api/backup, JSON body); refuses a short one', async () => {
    const res = await owner
      .post('/api/backup')
      .send({ passphrase: PASSPHRASE })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    sealed = res.body as Buffer;
    const { gunzipSync } = await import('node:zlib');
    const tar = gunzipSync(sealed).toString('latin1');
    for (const secret of SECRETS) {
      expect(tar).not.toContain(secret);
      expect(tar).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(tar).toMatch(/"scheme": "scrypt-aes-256-gcm"[\s\S]*"salt": "/);
    const short = await owner
      .post('/api/backup')
      .send({ passphrase: 'short' })
      .expect(400);
    expect(short.body.message).toMatch(/at least 8 characters/);
    await owner.get('/api/backup?passphrase=short').expect(400);
    await owner.post('/api/backup').send({ passphrase: 5 }).expect(400);
  });

  describe('into a fresh instance', () => {
    let target: TestApp;
    let owner2: TestAgent;
    beforeAll(async () => {
      target = await createTestApp();
      owner2 = await target.owner();
      await owner2
        .patch('/api/settings')
        .send({ timezone: 'Asia/Tokyo' })
        .expect(200);
    });
    afterAll(() => target.close());

    it('restores chats, messages, attachments, settings with keys and files; the owner stays logged in', async () => {
      const res = await owner2
        .post('/api/backup/restore')
        .set('Content-Type', 'application/gzip')
        .set('X-Backup-Passphrase', PASSPHRASE)
        .send(sealed);
      expect(res.body.message).toBeUndefined();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        restored: true,
        appVersion: expect.any(String),
        files: 2,
        secrets: 'restored',
      });
      // The sealed header value is back on its server.
      expect(
        (await owner2.get('/api/mcp/servers/backupmcp').expect(200)).body
          .headers,
      ).toEqual({ Authorization: '••••7777' });
      expect(res.body.collections).toEqual(
        expect.arrayContaining([
          { name: 'chats', count: 1 },
          { name: 'messages', count: 2 },
          { name: 'attachments', count: 1 },
          { name: 'ai_readings', count: 1 },
        ]),
      );

      // The same session goes on working (auth is not part of a backup).
      const chats: ChatSummary[] = (await owner2.get('/api/chats').expect(200))
        .body;
      expect(chats.map((c) => [c.id, c.title])).toEqual([[chatId, 'Trip']]);
      const messages: ChatMessage[] = (
        await owner2.get(`/api/chats/${chatId}/messages`).expect(200)
      ).body;
      expect(messages.map((m) => m.content)).toEqual([
        'see my list',
        'Socks noted.',
      ]);
      expect(JSON.stringify(messages[0])).toContain(attachmentId);
      const file = await owner2
        .get(`/api/attachments/${attachmentId}`)
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect((file.body as Buffer).toString()).toBe('packing list: socks');

      // The settings cache was dropped: the restored zone and keys are served.
      const settings = (await owner2.get('/api/settings').expect(200)).body;
      expect(settings).toMatchObject({
        timezone: 'Europe/Berlin',
        primaryModel: 'gpt-4.1-mini',
        openaiApiKey: `••••${OPENAI_TEST_KEY.slice(-4)}`,
        braveApiKey: '••••9876',
        openaiCompatible: [
          {
            name: 'local',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: '••••5555',
          },
        ],
      });
      expect(
        readFileSync(
          join(
            target.config.dataDir,
            'files',
            'state',
            'notes',
            'groceries.md',
          ),
          'utf8',
        ),
      ).toBe(note);

      // BSON types survive (a whole double stays a double, a long a long).
      const raw = await target.app
        .get<Connection>(getConnectionToken())
        .db?.collection('ai_readings')
        .findOne({ _id: 'r1' as never }, { promoteValues: false });
      expect(raw?.['value']).toBeInstanceOf(mongo.Double);
      expect(String(raw?.['big'])).toBe('9007199254740993');
      expect(raw?.['big']).toBeInstanceOf(mongo.Long);
      expect(raw?.['at']).toEqual(new Date('2026-02-03T04:05:06.789Z'));
      expect(raw?.['raw']).toBeInstanceOf(mongo.Binary);

      // The password of this instance still logs in.
      await target
        .http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
    });

    it('refuses to restore over chats without ?replace=true (409), and replaces with it (multipart)', async () => {
      await owner2
        .post('/api/chats')
        .send({ title: 'Made after restore' })
        .expect(201);
      const before = await snapshot(target);
      const refused = await owner2
        .post('/api/backup/restore')
        .attach('file', archive, 'backup.tar.gz')
        .expect(409);
      expect(refused.body.message).toMatch(/already has chats.*replace=true/);
      expect(await snapshot(target)).toEqual(before);

      // Restoring the backup without secrets keeps this instance's own (here: a key set after the first restore).
      await owner2
        .patch('/api/settings')
        .send({ braveApiKey: 'BSA-target-own-4321' })
        .expect(200);
      const replaced = await owner2
        .post('/api/backup/restore?replace=true')
        .attach('file', archive, 'backup.tar.gz')
        .expect(200);
      expect(replaced.body.secrets).toBe('kept');
      // The archive held no header value: the same server here (name and address) keeps its own.
      expect(
        (await owner2.get('/api/mcp/servers/backupmcp').expect(200)).body
          .headers,
      ).toEqual({ Authorization: '••••7777' });
      expect(
        (await owner2.get('/api/settings').expect(200)).body,
      ).toMatchObject({
        braveApiKey: '••••4321',
        openaiApiKey: `••••${OPENAI_TEST_KEY.slice(-4)}`,
        openaiCompatible: [
          {
            name: 'local',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: '••••5555',
          },
        ],
      });
      // The passphrase as a multipart field opens the sealed secrets again.
      const reopened = await owner2
        .post('/api/backup/restore?replace=true')
        .field('passphrase', PASSPHRASE)
        .attach('file', sealed, 'backup.tar.gz')
        .expect(200);
      expect(reopened.body.secrets).toBe('restored');
      expect(
        (await owner2.get('/api/settings').expect(200)).body.braveApiKey,
      ).toBe('••••9876');
      const chats: ChatSummary[] = (await owner2.get('/api/chats').expect(200))
        .body;
      expect(chats.map((c) => c.title)).toEqual(['Trip']);
      // Switched over and cleaned up: no staging or previous collections, no journal.
      const db = target.app.get<Connection>(getConnectionToken())
        .db as mongo.Db;
      const names = (await db.listCollections().toArray()).map((c) => c.name);
      expect(names.filter((n) => n.includes('restore_'))).toEqual([]);
      expect(
        existsSync(join(target.config.dataDir, 'backup-restore.journal.json')),
      ).toBe(false);
    });
  });

  it("restores an instance's own backup with jobs, Pulse and usage into itself (its real documents pass the checks)", async () => {
    const self = await createTestApp();
    try {
      const agent = await self.owner();
      await agent
        .post('/api/cronjobs')
        .send({
          name: 'Daily',
          instruction: 'Say hi.',
          cronExpression: '0 9 * * *',
        })
        .expect(201);
      await agent.post('/api/chats').send({ title: 'Mine' }).expect(201);
      const own = await agent
        .get('/api/backup')
        .buffer(true)
        .parse(binary)
        .expect(200);
      const before = await snapshot(self);
      const res = await agent
        .post('/api/backup/restore?replace=true')
        .set('Content-Type', 'application/gzip')
        .send(own.body as Buffer);
      expect(res.body.message).toBeUndefined();
      expect(res.status).toBe(200);
      expect(await snapshot(self)).toEqual(before);
    } finally {
      await self.close();
    }
  });

  describe('stored documents of the wrong shape', () => {
    it('never stop the app from starting, nor make the settings or the chat list fail', async () => {
      const first = await createTestApp();
      const dbName = first.app.get<Connection>(getConnectionToken()).name;
      const agent = await first.owner();
      await agent.post('/api/chats').send({ title: 'Kept' }).expect(201);
      const db = first.app.get<Connection>(getConnectionToken()).db as mongo.Db;
      await db
        .collection('settings')
        .updateOne(
          { _id: 'app_settings' as never },
          { $set: { openaiCompatible: 'oops', disabledTools: 5, timezone: 7 } },
          { upsert: true },
        );
      await db.collection('chats').insertMany([
        { _id: 'not-an-id' as never, title: { bad: true }, createdAt: 'x' },
        {
          _id: new mongo.ObjectId(),
          title: 'Text dates',
          createdAt: '2026-01-01',
          updatedAt: '2026-01-01',
        },
      ]);
      first.app.get(SettingsService).forgetAfterRestore();
      // The chat list is kept in memory: read it again, as a restore does, so the malformed rows are seen.
      await first.app.get(ChatList).reloadAfterRestore();
      const settings = await agent.get('/api/settings').expect(200);
      expect(settings.body.openaiCompatible).toEqual([]);
      const chats: ChatSummary[] = (await agent.get('/api/chats').expect(200))
        .body;
      expect(chats.map((c) => c.title)).toEqual(['Kept']);
      await first.app.close();

      // A new start on the same database comes up, with defaults for what is malformed.
      const second = await createTestApp({
        database: sharedTestDatabase(dbName),
      });
      try {
        const owner3 = await second.owner();
        await owner3.get('/api/settings').expect(200);
        const again: ChatSummary[] = (
          await owner3.get('/api/chats').expect(200)
        ).body;
        expect(again.map((c) => c.title)).toEqual(['Kept']);
      } finally {
        await (second.app.get<Connection>(getConnectionToken()).db as mongo.Db)
          .dropDatabase()
          .catch(() => undefined);
        await second.close();
      }
    });
  });

  describe('refusals leave everything as it was', () => {
    let fresh: TestApp;
    let agent: TestAgent;
    let before: unknown;
    beforeAll(async () => {
      fresh = await createTestApp();
      agent = await fresh.owner();
      await agent
        .patch('/api/settings')
        .send({ timezone: 'Asia/Tokyo' })
        .expect(200);
      mkdirSync(join(fresh.config.dataDir, 'files', 'state'), {
        recursive: true,
      });
      writeFileSync(
        join(fresh.config.dataDir, 'files', 'state', 'mine.txt'),
        'mine',
      );
      before = await snapshot(fresh);
    });
    afterAll(() => fresh.close());
    afterEach(async () => {
      expect(await snapshot(fresh)).toEqual(before);
      expect(existsSync(join(fresh.config.dataDir, 'evil.txt'))).toBe(false);
      const work = join(fresh.config.dataDir, 'backup-work');
      expect(existsSync(work) ? readdirSync(work) : []).toEqual([]);
    });

    const restoreWith = (path: string, body: Buffer) =>
      agent.post(path).set('Content-Type', 'application/gzip').send(body);
    const restore = (body: Buffer) =>
      agent
        .post('/api/backup/restore')
        .set('Content-Type', 'application/gzip')
        .send(body);

    it.each([
      [
        'cut in half',
        () => archive.subarray(0, Math.floor(archive.length / 2)),
        /truncated/,
      ],
      [
        'cut short by 40 bytes',
        () => archive.subarray(0, archive.length - 40),
        /truncated|damaged/,
      ],
      [
        'not an archive',
        () => Buffer.from('just some text, not a backup\n'.repeat(40)),
        /not a \.tar\.gz archive/,
      ],
      [
        'a foreign tar.gz',
        () => rawTarGz([{ path: 'project/README.md', body: '# hello' }]),
        /it holds "project\/README\.md", which is not part of a MetatronOS backup/,
      ],
      [
        'a tar.gz with a foreign manifest',
        () =>
          rawTarGz([
            { path: 'manifest.json', body: '{"name":"something else"}' },
          ]),
        /does not describe a MetatronOS backup/,
      ],
      [
        'a tar.gz without manifest',
        () => rawTarGz([{ path: 'db/chats.ejson', body: '' }]),
        /no manifest\.json/,
      ],
      [
        "an entry with '..'",
        () =>
          rawTarGz([
            { path: 'manifest.json', body: EMPTY_MANIFEST },
            { path: 'files/../../../evil.txt', body: 'evil' },
          ]),
        /points outside the archive/,
      ],
      [
        "a top-level '../' entry",
        () =>
          rawTarGz([
            { path: 'manifest.json', body: EMPTY_MANIFEST },
            { path: '../evil.txt', body: 'evil' },
          ]),
        /points outside the archive/,
      ],
      [
        'an absolute path',
        () =>
          rawTarGz([
            { path: 'manifest.json', body: EMPTY_MANIFEST },
            { path: '/tmp/evil.txt', body: 'evil' },
          ]),
        /absolute/,
      ],
      [
        'a symbolic link',
        () =>
          rawTarGz([
            { path: 'manifest.json', body: EMPTY_MANIFEST },
            {
              path: 'files/state/link',
              type: 'SymbolicLink',
              linkpath: '/etc/passwd',
            },
          ]),
        /symbolic link/,
      ],
      [
        'a hard link',
        () =>
          rawTarGz([
            { path: 'manifest.json', body: EMPTY_MANIFEST },
            {
              path: 'files/state/link',
              type: 'Link',
              linkpath: '../../../evil.txt',
            },
          ]),
        /hard link/,
      ],
      [
        'a document count that does not match',
        () =>
          rawTarGz([
            {
              path: 'manifest.json',
              body: EMPTY_MANIFEST.replace(
                '"collections":[]',
                '"collections":[{"name":"ai_notes","count":2,"indexes":[]}]',
              ),
            },
            { path: 'db/ai_notes.ejson', body: '{"_id":"a"}\n' },
          ]),
        /db\/ai_notes\.ejson holds 1 documents instead of 2/,
      ],
      [
        'a line that is not Extended JSON',
        () =>
          rawTarGz([
            {
              path: 'manifest.json',
              body: EMPTY_MANIFEST.replace(
                '"collections":[]',
                '"collections":[{"name":"chats","count":1,"indexes":[]}]',
              ),
            },
            { path: 'db/chats.ejson', body: '{"_id": {"$oid": "nope"}}\n' },
          ]),
        /line 1 of chats\.ejson is not Extended JSON/,
      ],
      [
        'a newer backup format',
        () =>
          rawTarGz([
            {
              path: 'manifest.json',
              body: EMPTY_MANIFEST.replace(
                '"formatVersion":1',
                '"formatVersion":99',
              ),
            },
          ]),
        /newer MetatronOS/,
      ],
    ])('refuses %s with 400', async (_name, body, message) => {
      const res = await restore(body()).expect(400);
      expect(res.body.message).toMatch(message);
      expect(res.body.message).toMatch(/Nothing was changed\.$/);
    });

    it.each([
      [
        'a duplicate _id',
        () => ({ chats: { docs: [goodChat(), goodChat(CHAT_ID, 'Twin')] } }),
        /in chats, the document with _id 65a000000000000000000001: its _id appears twice in the archive/,
      ],
      [
        'a settings document of the wrong shape',
        () => ({
          settings: {
            docs: [{ _id: 'app_settings', openaiCompatible: 'oops' }],
          },
        }),
        /in settings, the document with _id "app_settings": openaiCompatible must be a list but is the text "oops"/,
      ],
      [
        'an endpoint without its base URL in the settings',
        () => ({
          settings: {
            docs: [
              {
                _id: 'app_settings',
                openaiCompatible: [{ name: 'local', apiKey: null }],
              },
            ],
          },
        }),
        /in settings, the document with _id "app_settings": openaiCompatible\[0\]\.baseUrl is required but missing/,
      ],
      [
        'a system instruction of the wrong shape',
        () => ({
          settings: {
            docs: [{ _id: 'system_instruction', memoryEnabled: 'yes' }],
          },
        }),
        /memoryEnabled must be true or false but is the text "yes"/,
      ],
      [
        'a chat with a date stored as text',
        () => ({
          chats: {
            docs: [{ ...goodChat(), createdAt: '2026-01-01T00:00:00Z' }],
          },
        }),
        /in chats, the document with _id 65a000000000000000000001: createdAt must be a date but is the text "2026-01-01T00:00:00Z"/,
      ],
      [
        'a chat with a string _id and no title',
        () => ({
          chats: { docs: [{ ...goodChat(), _id: 'c1', title: undefined }] },
        }),
        /in chats, the document with _id "c1": .*title is required but missing.*_id must be an ObjectId but is the text "c1"|in chats, the document with _id "c1": _id must be an ObjectId but is the text "c1", title is required but missing/,
      ],
      [
        'a message whose chat id is a number',
        () => ({
          messages: {
            docs: [
              {
                _id: new mongo.ObjectId(),
                chatId: 7,
                role: 'user',
                content: 'hi',
                status: 'complete',
                createdAt: new Date(),
                updatedAt: new Date(),
              },
            ],
          },
        }),
        /in messages, .*chatId must be an ObjectId but is the number 7/,
      ],
      [
        "two Telegram permissions for one chat (the app's unique index)",
        () => {
          const permission = (n: number) => ({
            _id: new mongo.ObjectId(),
            chatId: '42',
            displayName: `Ann ${n}`,
            createdAt: new Date(),
            updatedAt: new Date(),
          });
          return {
            telegram_permissions: { docs: [permission(1), permission(2)] },
          };
        },
        /in telegram_permissions, the document with _id [0-9a-f]{24}: chatId repeats another document's value, but the unique index .* allows each only once/,
      ],
      [
        "a duplicate under one of the archive's own unique indexes",
        () => ({
          ai_books: {
            docs: [
              { _id: 1, isbn: 'x' },
              { _id: 2, isbn: 'x' },
            ],
            indexes: [{ key: { isbn: 1 }, name: 'isbn_1', unique: true }],
          },
        }),
        /in ai_books, the document with _id 2: isbn repeats another document's value, but the unique index isbn_1 allows each only once/,
      ],
    ])(
      'refuses %s with 400 naming the document, whether replacing or not',
      async (_name, collections, message) => {
        const body = craftedArchive(
          collections() as Parameters<typeof craftedArchive>[0],
        );
        for (const path of [
          '/api/backup/restore?replace=true',
          '/api/backup/restore',
        ]) {
          const res = await agent
            .post(path)
            .set('Content-Type', 'application/gzip')
            .send(body)
            .expect(400);
          expect(res.body.message).toMatch(message);
          expect(res.body.message).toMatch(/Nothing was changed\.$/);
        }
      },
    );

    it('answers multipart without a boundary, or cut short, with 400 on every upload route', async () => {
      for (const path of ['/api/backup/restore', '/api/attachments']) {
        for (const type of [
          'multipart/form-data',
          'multipart/form-data; boundary=',
          'multipart/form-data; boundary=xyz',
        ]) {
          const res = await agent
            .post(path)
            .set('Content-Type', type)
            .send(
              Buffer.from(
                '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
              ),
            );
          expect([path, type, res.status]).toEqual([path, type, 400]);
        }
      }
    });

    it('refuses a wrong passphrase with 400, in the query, the header or a form field', async () => {
      const wrong = 'not the passphrase';
      for (const send of [
        () =>
          restoreWith(
            `/api/backup/restore?passphrase=${encodeURIComponent(wrong)}`,
            sealed,
          ),
        () =>
          agent
            .post('/api/backup/restore?replace=true')
            .set('Content-Type', 'application/gzip')
            .set('X-Backup-Passphrase', wrong)
            .send(sealed),
        () =>
          agent
            .post('/api/backup/restore')
            .field('passphrase', wrong)
            .attach('file', sealed, 'backup.tar.gz'),
      ]) {
        const res = await send().expect(400);
        expect(res.body.message).toMatch(
          /^Wrong passphrase.*Nothing was changed\.$/,
        );
      }
    });

    it('refuses an empty body and a multipart upload without the file field', async () => {
      expect((await restore(Buffer.alloc(0)).expect(400)).body.message).toMatch(
        /No archive/,
      );
      const res = await agent
        .post('/api/backup/restore')
        .attach('archive', archive, 'backup.tar.gz')
        .expect(400);
      expect(res.body.message).toMatch(/field named "file"/);
    });

    it('refuses an archive over the size limit with 413', async () => {
      const limits = fresh.app.get(BackupLimits);
      const saved = limits.maxArchiveBytes;
      limits.maxArchiveBytes = 1000;
      try {
        const res = await restore(archive).expect(413);
        expect(res.body.message).toMatch(/larger than/);
      } finally {
        limits.maxArchiveBytes = saved;
      }
    });

    it('refuses an unknown query value and needs the session', async () => {
      await agent
        .post('/api/backup/restore?replace=yes')
        .set('Content-Type', 'application/gzip')
        .send(archive)
        .expect(400);
      await fresh.http().get('/api/backup').expect(401);
      await fresh
        .http()
        .post('/api/backup/restore')
        .set('Content-Type', 'application/gzip')
        .send(archive)
        .expect(401);
    });
  });
});
