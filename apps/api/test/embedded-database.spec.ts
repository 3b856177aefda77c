import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import mongoose from 'mongoose';
import { loadAppConfig } from '../src/config/app-config';
import { DataDirLock } from '../src/data-dir-lock';
import {
  EmbeddedDatabase,
  MAX_SOCKET_PATH_BYTES,
  embeddedSocketPath,
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

  it('starts on a Unix socket in a 0700 directory of the data dir with no TCP port, answers ping, and a second start on the same data dir finds the data', async () => {
    const first = await startDatabase({
      mongodbUri: undefined,
      dataDir,
      ferretdbBin: ferretdbBinary(),
    });
    expect(first.kind).toBe('embedded');
    const socket = join(dataDir, 'run', 'ferretdb.sock');
    expect(first.embedded?.socketPath).toBe(socket);
    expect(first.uri).toBe(`mongodb://${encodeURIComponent(socket)}/`);
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(join(dataDir, 'run')).mode & 0o777).toBe(0o700);
    expect(tcpListenersOf(first.embedded?.pid as number)).toEqual([]);
    // mongoose (not only the bare driver) takes the socket URI too.
    const connection = await mongoose
      .createConnection(first.uri, { dbName: 'metatronos' })
      .asPromise();
    try {
      expect(await connection.db?.admin().ping()).toMatchObject({ ok: 1 });
    } finally {
      await connection.close();
    }
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
      // SIGKILL leaves the socket file behind; the restart must not trip over it.
      expect(lstatSync(database.socketPath as string).isSocket()).toBe(true);

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

  it('starts again after a crash of the whole app left a stale socket behind', async () => {
    const first = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    await withClient(first.uri, (db) =>
      db.collection('notes').insertOne({ text: 'before the crash' }),
    );
    const exited = new Promise((resolve) => first.onUnexpectedExit(resolve));
    process.kill(first.pid as number, 'SIGKILL');
    await exited;
    expect(lstatSync(first.socketPath as string).isSocket()).toBe(true);

    const second = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    try {
      expect(second.uri).toBe(first.uri);
      const found = await withClient(second.uri, (db) =>
        db.collection('notes').findOne({}, { projection: { _id: 0 } }),
      );
      expect(found).toEqual({ text: 'before the crash' });
    } finally {
      await second.stop();
    }
    expect(existsSync(second.socketPath as string)).toBe(false); // a clean stop removes it
  });

  it("leaves a live server's socket alone and refuses to start a second one on it", async () => {
    const first = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    try {
      await expect(
        EmbeddedDatabase.start({ binPath: ferretdbBinary(), dataDir }),
      ).rejects.toThrow(
        `The embedded database failed to start: cannot listen on ${first.socketPath}: another server is already listening there`,
      );
      await withClient(first.uri, (db) => db.command({ ping: 1 }));
    } finally {
      await first.stop();
    }
  });

  it('refuses a socket directory that is a symbolic link, and a socket path that is not a socket', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'metatron-elsewhere-'));
    try {
      symlinkSync(elsewhere, join(dataDir, 'run'));
      await expect(
        EmbeddedDatabase.start({ binPath: ferretdbBinary(), dataDir }),
      ).rejects.toThrow(
        `The embedded database failed to start: socket directory ${join(dataDir, 'run')} is not a directory (symbolic links are refused)`,
      );
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    rmSync(join(dataDir, 'run'));
    mkdirSync(join(dataDir, 'run'));
    writeFileSync(join(dataDir, 'run', 'ferretdb.sock'), 'not a socket');
    await expect(
      EmbeddedDatabase.start({ binPath: ferretdbBinary(), dataDir }),
    ).rejects.toThrow(
      `The embedded database failed to start: cannot listen on ${join(dataDir, 'run', 'ferretdb.sock')}: the path exists and is not a socket`,
    );
  });

  // The attack itself: another OS user's process. Needs root to run a process as another user.
  const asRoot =
    process.platform === 'linux' && process.getuid?.() === 0 ? it : it.skip;
  asRoot(
    "keeps another OS user's processes out of the socket, which they could reach on the TCP opt-in",
    async () => {
      chmodSync(dataDir, 0o755); // only the socket's own directory stands in the way
      const onSocket = await EmbeddedDatabase.start({
        binPath: ferretdbBinary(),
        dataDir,
      });
      try {
        expect(await connectAsNobody(onSocket.socketPath as string)).toBe(
          'EACCES',
        );
      } finally {
        await onSocket.stop();
      }
      const onTcp = await EmbeddedDatabase.start({
        binPath: ferretdbBinary(),
        dataDir,
        tcpPort: 0,
      });
      try {
        const port = Number(/:(\d+)\/$/.exec(onTcp.uri)?.[1]);
        expect(await connectAsNobody(port)).toBe('connected');
      } finally {
        await onTcp.stop();
      }
    },
  );

  it('makes an existing socket directory private again', async () => {
    mkdirSync(join(dataDir, 'run'), { mode: 0o755 });
    const database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    try {
      expect(statSync(join(dataDir, 'run')).mode & 0o777).toBe(0o700);
    } finally {
      await database.stop();
    }
  });

  it('puts the socket of a data dir too long for a socket path into a private 0700 directory of the runtime or temp dir', async () => {
    const longDir = join(dataDir, 'x'.repeat(150 - dataDir.length - 1));
    expect(longDir).toHaveLength(150);
    const socket = embeddedSocketPath(longDir);
    expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(
      MAX_SOCKET_PATH_BYTES,
    );
    expect(socket.startsWith(longDir)).toBe(false);
    expect(basename(dirname(socket))).toMatch(
      new RegExp(`^metatronos-${process.getuid?.()}-[0-9a-f]{16}$`),
    );
    expect(embeddedSocketPath(longDir)).toBe(socket); // the same across restarts
    expect(embeddedSocketPath(`${longDir}-other`)).not.toBe(socket);
    try {
      const database = await startDatabase({
        mongodbUri: undefined,
        dataDir: longDir,
        ferretdbBin: ferretdbBinary(),
      });
      try {
        expect(database.embedded?.socketPath).toBe(socket);
        expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
        expect(tcpListenersOf(database.embedded?.pid as number)).toEqual([]);
        await withClient(database.uri, (db) =>
          db.collection('notes').insertOne({ text: 'long data dir' }),
        );
        expect(existsSync(join(longDir, 'db', 'metatronos.sqlite'))).toBe(true);
      } finally {
        await database.embedded?.stop();
      }
    } finally {
      rmSync(dirname(socket), { recursive: true, force: true });
    }
  });

  it('prefers $XDG_RUNTIME_DIR for the socket of a long data dir', () => {
    const longDir = join(dataDir, 'y'.repeat(120));
    expect(embeddedSocketPath(longDir, { XDG_RUNTIME_DIR: dataDir })).toMatch(
      new RegExp(
        `^${dataDir}/metatronos-${process.getuid?.()}-[0-9a-f]{16}/ferretdb\\.sock$`,
      ),
    );
    // A relative or missing runtime dir is not used.
    expect(
      embeddedSocketPath(longDir, { XDG_RUNTIME_DIR: 'relative' }),
    ).not.toMatch(/^relative/);
  });

  it('listens on a loopback TCP port only when asked to (EMBEDDED_DB_TCP)', async () => {
    const database = await startDatabase({
      mongodbUri: undefined,
      dataDir,
      ferretdbBin: ferretdbBinary(),
      embeddedDbTcpPort: 0,
    });
    try {
      expect(database.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
      expect(database.embedded?.socketPath).toBeUndefined();
      expect(existsSync(join(dataDir, 'run'))).toBe(false);
      const port = Number(/:(\d+)\/$/.exec(database.uri)?.[1]);
      expect(tcpListenersOf(database.embedded?.pid as number)).toEqual([port]);
      await withClient(database.uri, (db) => db.command({ ping: 1 }));
    } finally {
      await database.embedded?.stop();
    }
  });

  it('reads EMBEDDED_DB_TCP: unset or 0 = Unix socket, 1 = a free port, or a port number', () => {
    expect(loadAppConfig({}).embeddedDbTcpPort).toBeUndefined();
    expect(loadAppConfig({ EMBEDDED_DB_TCP: '0' }).embeddedDbTcpPort).toBe(
      undefined,
    );
    expect(loadAppConfig({ EMBEDDED_DB_TCP: '1' }).embeddedDbTcpPort).toBe(0);
    expect(loadAppConfig({ EMBEDDED_DB_TCP: 'true' }).embeddedDbTcpPort).toBe(
      0,
    );
    expect(loadAppConfig({ EMBEDDED_DB_TCP: '27018' }).embeddedDbTcpPort).toBe(
      27018,
    );
    for (const bad of ['yes', '80', '70000', '-1', '1.5', '0x50'])
      expect(() => loadAppConfig({ EMBEDDED_DB_TCP: bad })).toThrow(
        `EMBEDDED_DB_TCP must be 1 (a free loopback port), a port from 1024 to 65535, or 0 (Unix socket only) (got "${bad}")`,
      );
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

/** Connects to a socket path or a loopback port as the user nobody (65534); says how it went. */
async function connectAsNobody(target: string | number): Promise<string> {
  const script =
    'const [t] = process.argv.slice(1);' +
    'require("node:net").connect(/^\\d+$/.test(t) ? { host: "127.0.0.1", port: +t } : t)' +
    '.on("connect", () => { console.log("connected"); process.exit(0); })' +
    '.on("error", (e) => { console.log(e.code); process.exit(1); });';
  const child = spawn(process.execPath, ['-e', script, String(target)], {
    uid: 65534,
    gid: 65534,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  return out.trim();
}

/** Loopback TCP ports a process listens on (Linux: its socket fds against /proc/net/tcp{,6}). */
function tcpListenersOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(
        readlinkSync(`/proc/${pid}/fd/${fd}`),
      );
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      // fields: sl local_address rem_address st … inode (index 9); st 0A = LISTEN
      if (fields[3] === '0A' && inodes.has(fields[9]))
        ports.push(parseInt(fields[1].split(':')[1], 16));
    }
  }
  return ports;
}
