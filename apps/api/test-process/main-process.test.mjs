// The built server as an operator runs it: `node dist/apps/api/main.js`.
// Run by `nx run api:test-process` (builds the API and the database launcher first).
import { spawn, execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  writeFileSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  freePort,
  main,
  root,
  tempDir as newTempDir,
} from './support/built-server.mjs';

const tempDir = () => newTempDir('metatron-proc-');

/** Starts main.js; resolves once it is healthy (or rejects with its output). */
function start(env) {
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c) => (out.stdout += c));
  child.stderr.on('data', (c) => (out.stderr += c));
  const exit = new Promise((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, out, exit };
}

async function waitHealthy(port, proc, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null)
      throw new Error(`exited early: ${proc.out.stderr}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`not healthy in time: ${proc.out.stderr}`);
}

/** The embedded database launcher started by `pid`, if any. */
function launcherOf(pid) {
  try {
    return Number(
      execFileSync('pgrep', ['-P', String(pid), '-f', 'ferretdb-launcher'])
        .toString()
        .trim(),
    );
  } catch {
    return undefined;
  }
}

/** Loopback TCP ports a process listens on (Linux: its socket fds against /proc/net/tcp{,6}). */
function tcpListenersOf(pid) {
  const inodes = new Set();
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
  const ports = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9]))
        ports.push(parseInt(fields[1].split(':')[1], 16));
    }
  }
  return ports;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)])
      .toString()
      .startsWith('Z');
  } catch {
    return false;
  }
}

async function gone(pid, withinMs = 5000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline && alive(pid))
    await new Promise((done) => setTimeout(done, 50));
  return !alive(pid);
}

describe('main.js', { timeout: 120000 }, () => {
  it('is built', () =>
    assert.ok(existsSync(main), `${main} is missing: run nx build api`));

  it('starts on the embedded database, stops on SIGTERM with exit 0 and no orphan, and finds its data after a restart', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const first = start({ PORT: String(port), DATA_DIR: dataDir });
    await waitHealthy(port, first);
    const launcher = launcherOf(first.child.pid);
    assert.ok(launcher, 'the embedded database runs as a child of the API');
    const setup = await fetch(`http://127.0.0.1:${port}/api/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'process test password' }),
    });
    assert.equal(setup.status, 201);

    first.child.kill('SIGTERM');
    assert.deepEqual(await first.exit, { code: 0, signal: null });
    assert.ok(await gone(launcher), 'the database process ended with the API');
    assert.ok(
      !existsSync(join(dataDir, 'metatronos.pid')),
      'the data dir lock is released',
    );

    const second = start({ PORT: String(port), DATA_DIR: dataDir });
    await waitHealthy(port, second);
    const status = await (
      await fetch(`http://127.0.0.1:${port}/api/auth/status`)
    ).json();
    assert.deepEqual(status, { ownerExists: true, authenticated: false });
    second.child.kill('SIGINT');
    assert.equal((await second.exit).code, 0);
  });

  it(
    'opens the embedded database only on a Unix socket in a 0700 directory of the data dir, no TCP port, unless EMBEDDED_DB_TCP opts in',
    { skip: process.platform !== 'linux' && 'reads /proc' },
    async () => {
      const dataDir = tempDir();
      const port = await freePort();
      const proc = start({
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'log',
      });
      await waitHealthy(port, proc);
      const launcher = launcherOf(proc.child.pid);
      const socket = join(dataDir, 'run', 'ferretdb.sock');
      assert.ok(statSync(socket).isSocket(), `${socket} is a socket`);
      assert.equal(statSync(join(dataDir, 'run')).mode & 0o777, 0o700);
      assert.deepEqual(tcpListenersOf(launcher), [], 'no TCP port');
      assert.match(
        proc.out.stdout,
        new RegExp(
          escapeRegExp(
            `Embedded database ready at mongodb://${encodeURIComponent(socket)}/ (Unix socket ${socket}: only this OS user can connect)`,
          ),
        ),
      );
      proc.child.kill('SIGTERM');
      assert.equal((await proc.exit).code, 0);
      assert.ok(!existsSync(socket), 'a clean stop removes the socket');

      const tcpDir = tempDir();
      const tcp = start({
        PORT: String(port),
        DATA_DIR: tcpDir,
        EMBEDDED_DB_TCP: '1',
      });
      await waitHealthy(port, tcp);
      const ports = tcpListenersOf(launcherOf(tcp.child.pid));
      assert.equal(ports.length, 1, 'one loopback TCP port');
      assert.ok(!existsSync(join(tcpDir, 'run')), 'no socket');
      assert.match(
        tcp.out.stdout + tcp.out.stderr,
        new RegExp(
          `Embedded database ready at mongodb://127\\.0\\.0\\.1:${ports[0]}/: loopback TCP without authentication, every local user can connect`,
        ),
      );
      tcp.child.kill('SIGTERM');
      assert.equal((await tcp.exit).code, 0);
    },
  );

  it('writes one JSON object per log line with LOG_FORMAT=json, and never the password', async () => {
    const port = await freePort();
    const proc = start({
      PORT: String(port),
      DATA_DIR: tempDir(),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'log',
    });
    await waitHealthy(port, proc);
    const password = 'json-log-secret-password';
    for (const path of ['setup', 'login']) {
      await fetch(`http://127.0.0.1:${port}/api/auth/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          password: path === 'login' ? `${password}-wrong` : password,
        }),
      });
    }
    proc.child.kill('SIGTERM');
    await proc.exit;
    const lines = proc.out.stdout.trim().split('\n');
    const entries = lines.map((line) => JSON.parse(line));
    assert.ok(
      entries.every(
        (e) =>
          typeof e.level === 'string' &&
          typeof e.message === 'string' &&
          typeof e.timestamp === 'number',
      ),
    );
    assert.ok(
      entries.some(
        (e) => e.context === 'Auth' && e.message === 'Owner password set',
      ),
    );
    assert.ok(
      entries.some(
        (e) =>
          e.level === 'warn' && e.message === 'Failed login from 127.0.0.1',
      ),
    );
    assert.doesNotMatch(
      proc.out.stdout + proc.out.stderr,
      new RegExp(password),
    );
  });

  it('exits non-zero with one clear line when the port is in use, leaving no database behind', async () => {
    const blocker = createServer();
    await new Promise((done) => blocker.listen(0, '127.0.0.1', done));
    const { port } = blocker.address();
    try {
      const proc = start({ PORT: String(port), DATA_DIR: tempDir() });
      const { code } = await proc.exit;
      assert.equal(code, 1);
      assert.equal(
        proc.out.stderr,
        `metatronos: Port ${port} on 127.0.0.1 is already in use. Stop the other program or set PORT.\n`,
      );
      assert.equal(launcherOf(proc.child.pid), undefined);
    } finally {
      blocker.close();
    }
  });

  it('refuses bad configuration with exit 2 and names the variable', async () => {
    const proc = start({ PORT: 'eighty', DATA_DIR: tempDir() });
    assert.equal((await proc.exit).code, 2);
    assert.equal(
      proc.out.stderr,
      'metatronos: Invalid configuration: PORT must be a whole number from 1 to 65535 (got "eighty")\n',
    );
  });

  it('says in one line when the embedded database is not built', async () => {
    const proc = start({
      PORT: String(await freePort()),
      DATA_DIR: tempDir(),
      FERRETDB_BIN: '/nonexistent/ferretdb-launcher',
    });
    assert.equal((await proc.exit).code, 1);
    assert.match(
      proc.out.stderr,
      /^metatronos: The embedded database is not built \(\/nonexistent\/ferretdb-launcher is missing\)\. .*MONGODB_URI.*\n$/,
    );
  });

  it('says in one line when MONGODB_URI does not answer', async () => {
    const blocker = createServer((socket) => socket.destroy());
    await new Promise((done) => blocker.listen(0, '127.0.0.1', done));
    try {
      const uri = `mongodb://owner:topsecret@127.0.0.1:${blocker.address().port}/metatron`;
      const proc = start({
        PORT: String(await freePort()),
        DATA_DIR: tempDir(),
        MONGODB_URI: uri,
      });
      assert.equal((await proc.exit).code, 1);
      assert.match(
        proc.out.stderr,
        /^metatronos: Cannot reach MongoDB at mongodb:\/\/owner:\*\*\*\*@127\.0\.0\.1:\d+\/metatron: [^\n]+\n$/,
      );
      assert.doesNotMatch(proc.out.stderr + proc.out.stdout, /topsecret/);
    } finally {
      blocker.close();
    }
  });

  it('refuses a second MetatronOS on the same data dir', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const first = start({ PORT: String(port), DATA_DIR: dataDir });
    await waitHealthy(port, first);
    try {
      const second = start({
        PORT: String(await freePort()),
        DATA_DIR: dataDir,
      });
      assert.equal((await second.exit).code, 1);
      assert.match(
        second.out.stderr,
        new RegExp(
          `^metatronos: Another MetatronOS \\(pid ${first.child.pid}\\) is already using ${dataDir}\\.`,
        ),
      );
    } finally {
      first.child.kill('SIGTERM');
      await first.exit;
    }
  });

  it('npm start says in one line that the embedded database needs Go when there is no Go and no MONGODB_URI', async () => {
    const withoutGo = process.env.PATH.split(':')
      .filter((dir) => !existsSync(join(dir, 'go')))
      .join(':');
    const env = { ...process.env, PATH: withoutGo };
    delete env.MONGODB_URI;
    const proc = spawn('bash', ['tools/scripts/start.sh'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((done) => proc.once('exit', done));
    assert.equal(code, 3);
    assert.equal(
      stderr,
      'The embedded database needs the Go toolchain (https://go.dev/dl) — or set MONGODB_URI to use an existing MongoDB.\n',
    );
  });

  it('keeps a private compile cache that the next start uses, and ignores one another user could write or a damaged one', async () => {
    const cacheDir = join(tempDir(), 'compile-cache');
    const run = async (dir) => {
      const port = await freePort();
      const proc = start({
        PORT: String(port),
        DATA_DIR: tempDir(),
        LOG_LEVEL: 'debug',
        COMPILE_CACHE_DIR: dir,
      });
      await waitHealthy(port, proc);
      proc.child.kill('SIGTERM');
      assert.equal((await proc.exit).code, 0);
      if (proc.out.stdout.includes('Compile cache: off')) return { off: true };
      const line =
        /Compile cache: (\d+) modules from the cache, (\d+) compiled/.exec(
          proc.out.stdout,
        );
      assert.ok(
        line,
        `no compile cache line in: ${proc.out.stdout.slice(-2000)}`,
      );
      return { hits: Number(line[1]), compiled: Number(line[2]) };
    };
    const first = await run(cacheDir);
    assert.equal(first.hits, 0);
    assert.ok(first.compiled > 500, `compiled ${first.compiled}`);
    assert.equal(statSync(cacheDir).mode & 0o777, 0o700);
    const [file] = readdirSync(cacheDir);
    assert.equal(statSync(join(cacheDir, file)).mode & 0o777, 0o600);
    const second = await run(cacheDir);
    assert.ok(
      second.hits >= first.compiled - 20 && second.compiled < 20,
      `second start: ${JSON.stringify(second)} after ${JSON.stringify(first)}`,
    );

    // V8 trusts cached code: a cache another user could have written is not read.
    chmodSync(cacheDir, 0o777);
    assert.deepEqual(await run(cacheDir), { off: true });
    chmodSync(cacheDir, 0o700);
    writeFileSync(join(cacheDir, file), 'not a cache', { mode: 0o600 });
    // Files of other builds (1 to 5 days unused): a write keeps the three most recently used.
    const others = [1, 2, 3, 4, 5].map((days) => {
      const name = `${String(days).repeat(24)}.cache`;
      writeFileSync(join(cacheDir, name), 'another build', { mode: 0o600 });
      const at = new Date(Date.now() - days * 86_400_000);
      utimesSync(join(cacheDir, name), at, at);
      return name;
    });
    const damaged = await run(cacheDir);
    assert.equal(damaged.hits, 0);
    assert.ok(damaged.compiled > 500);
    assert.deepEqual(
      readdirSync(cacheDir).sort(),
      [...others.slice(0, 3), file].sort(),
    );
  });

  it('leaves no database process behind when the API is killed with SIGKILL', async () => {
    const port = await freePort();
    const proc = start({ PORT: String(port), DATA_DIR: tempDir() });
    await waitHealthy(port, proc);
    const launcher = launcherOf(proc.child.pid);
    assert.ok(launcher);
    proc.child.kill('SIGKILL');
    await proc.exit;
    assert.ok(await gone(launcher), 'the launcher exits when its parent dies');
  });
});
