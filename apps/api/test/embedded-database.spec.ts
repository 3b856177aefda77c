import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { DataDirLock } from '../src/data-dir-lock';
import {
  EmbeddedDatabase,
  prepareDataDir,
} from '../src/database/embedded-database';
import {
  dbNameFromUri,
  pingMongo,
  startDatabase,
} from '../src/database/database-runtime';
import { StartupError } from '../src/startup-error';
import { ferretdbBinary } from './support/test-database';

describe('EmbeddedDatabase', () => {
  let dataDir: string;
  beforeEach(
    () => (dataDir = mkdtempSync(join(tmpdir(), 'metatron-embedded-'))),
  );
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function withClient<T>(
    uri: string,
    work: (db: mongoose.mongo.Db) => Promise<T>,
  ): Promise<T> {
    const client = await new mongoose.mongo.MongoClient(uri).connect();
    try {
      return await work(client.db('metatronos'));
    } finally {
      await client.close();
    }
  }

  it('starts on a free loopback port, answers ping, and a second start on the same data dir finds the data', async () => {
    const first = await startDatabase({
      mongodbUri: undefined,
      dataDir,
      ferretdbBin: ferretdbBinary(),
    });
    expect(first.kind).toBe('embedded');
    expect(first.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
    await withClient(first.uri, (db) =>
      db.collection('notes').insertOne({ text: 'kept across restarts' }),
    );
    await first.embedded?.stop();
    expect(first.embedded?.running).toBe(false);

    const second = await startDatabase({
      mongodbUri: undefined,
      dataDir,
      ferretdbBin: ferretdbBinary(),
    });
    try {
      const found = await withClient(second.uri, (db) =>
        db.collection('notes').findOne({}, { projection: { _id: 0 } }),
      );
      expect(found).toEqual({ text: 'kept across restarts' });
    } finally {
      await second.embedded?.stop();
    }
  });

  it('finds documents by _id through the _id index, also next to other filter keys (tools/ferretdb/patches)', async () => {
    const database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    try {
      await withClient(database.uri, async (db) => {
        const items = db.collection<{ _id: string; state: string }>('items');
        await items.insertMany([
          { _id: 'a', state: 'pending' },
          { _id: 'b', state: 'done' },
        ]);
        const plan = async (filter: object) => {
          const answer = await db.command({
            explain: { find: 'items', filter },
            verbosity: 'queryPlanner',
          });
          return {
            plan: JSON.stringify(answer['queryPlanner']),
            pushdown: answer['filterPushdown'],
          };
        };
        // Upstream 1.24.2 scans here ("SCAN"): its queries and its unique index spell the _id path differently.
        for (const filter of [{ _id: 'a' }, { _id: 'a', state: 'pending' }]) {
          const { plan: text, pushdown } = await plan(filter);
          expect(text).toMatch(/USING INDEX/);
          expect(pushdown).toBe(true);
        }
        // Other filters still scan (and still answer right), with the rest of the filter applied in FerretDB.
        expect((await plan({ state: 'pending' })).plan).toMatch(/SCAN/);
        expect(
          await items.findOneAndUpdate(
            { _id: 'b', state: 'pending' },
            { $set: { state: 'x' } },
          ),
        ).toBeNull();
        expect(
          await items.findOneAndUpdate(
            { _id: 'a', state: 'pending' },
            { $set: { state: 'working' } },
            { returnDocument: 'after' },
          ),
        ).toEqual({ _id: 'a', state: 'working' });
        expect(
          await items.countDocuments({
            _id: 'a',
            $or: [{ state: 'done' }, { state: 'working' }],
          }),
        ).toBe(1);
        expect(
          await items.find({ state: { $in: ['done', 'x'] } }).toArray(),
        ).toEqual([{ _id: 'b', state: 'done' }]);
      });
    } finally {
      await database.stop();
    }
  });

  it('stops on SIGTERM and leaves no process behind; stop() twice is harmless', async () => {
    const database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    const pid = database.pid as number;
    await database.stop();
    await database.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('tells unexpected exits apart from stops', async () => {
    const database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    const exited = new Promise((resolve) => database.onUnexpectedExit(resolve));
    process.kill(database.pid as number, 'SIGKILL');
    await expect(exited).resolves.toMatchObject({ signal: 'SIGKILL' });
    expect(database.running).toBe(false);
  });

  it('restarts after a crash on the same address, with the data intact', async () => {
    const database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    try {
      const uri = database.uri;
      await withClient(uri, (db) =>
        db.collection('notes').insertOne({ text: 'survives a crash' }),
      );
      const exited = new Promise((resolve) =>
        database.onUnexpectedExit(resolve),
      );
      process.kill(database.pid as number, 'SIGKILL');
      await exited;

      await database.restart();
      expect(database.running).toBe(true);
      expect(database.uri).toBe(uri);
      const found = await withClient(uri, (db) =>
        db.collection('notes').findOne({}, { projection: { _id: 0 } }),
      );
      expect(found).toEqual({ text: 'survives a crash' });
    } finally {
      await database.stop();
    }
  });

  it('says in one line that the launcher is not built', async () => {
    await expect(
      EmbeddedDatabase.start({ binPath: join(dataDir, 'missing'), dataDir }),
    ).rejects.toThrow(
      new StartupError(
        `The embedded database is not built (${join(dataDir, 'missing')} is missing). ` +
          'Run `npm start`, which builds it with the Go toolchain, or set MONGODB_URI to use an existing MongoDB.',
      ),
    );
  });

  it('reports a launcher that fails at start with its reason', async () => {
    const fake = join(dataDir, 'broken-launcher');
    writeFileSync(
      fake,
      '#!/bin/sh\necho "ferretdb-launcher: data dir is on fire" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    await expect(
      EmbeddedDatabase.start({ binPath: fake, dataDir }),
    ).rejects.toThrow(
      'The embedded database failed to start: data dir is on fire',
    );
  });
});

describe('external MongoDB', () => {
  it('fails with one clear line when MONGODB_URI does not answer, hiding the password', async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    const port = (server.address() as { port: number }).port;
    try {
      const error = await pingMongo(
        `mongodb://me:hunter2@127.0.0.1:${port}/x`,
        500,
      ).catch((e: Error) => e);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Cannot reach MongoDB at mongodb://me:\\*\\*\\*\\*@127\\.0\\.0\\.1:${port}/x: `,
        ),
      );
      expect((error as Error).message).not.toContain('hunter2');
    } finally {
      server.close();
    }
  });

  it('takes the database name from the URI path, or uses metatronos', () => {
    expect(dbNameFromUri('mongodb://db:27017/mine?authSource=admin')).toBe(
      'mine',
    );
    expect(dbNameFromUri('mongodb://db:27017/')).toBe('metatronos');
    expect(dbNameFromUri('mongodb+srv://u:p@cluster.example')).toBe(
      'metatronos',
    );
  });
});

describe('data dir', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'metatron-lock-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('lets one MetatronOS hold a data dir and refuses a second live one', () => {
    writeFileSync(join(dataDir, 'metatronos.pid'), `${process.ppid}\n`);
    expect(() => DataDirLock.acquire(dataDir)).toThrow(
      `Another MetatronOS (pid ${process.ppid}) is already using ${dataDir}.`,
    );
  });

  it('takes over a lock left by a process that is gone, and releases it', () => {
    writeFileSync(join(dataDir, 'metatronos.pid'), '999999999\n');
    const lock = DataDirLock.acquire(dataDir);
    lock.release();
    expect(() => DataDirLock.acquire(dataDir).release()).not.toThrow();
  });

  it('refuses a data dir that cannot be created', () => {
    const file = join(dataDir, 'a-file');
    writeFileSync(file, '');
    expect(() => prepareDataDir(join(file, 'sub'))).toThrow(
      `DATA_DIR ${join(file, 'sub')} is not a writable directory`,
    );
  });
});
