// Shared by the process tests: where the built server is, free loopback ports, temp data dirs
// that are removed when the test file ends, starting the server and the owner's session.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after } from 'node:test';

export const root = resolve(import.meta.dirname, '../../../..');
export const main = join(root, 'dist/apps/api/main.js');

const dirs = [];
after(() =>
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })),
);

/** A new temp dir (e.g. a DATA_DIR), removed after the test file. */
export function tempDir(prefix = 'metatron-proc-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A free loopback port for the server under test. */
export async function freePort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * Starts main.js on a free loopback port with this DATA_DIR; resolves once it is healthy to
 * `{ child, out: { stdout, stderr }, exit, url }` (`exit` resolves to `{ code, signal }`).
 */
export async function startServer(dataDir, env = {}, healthyWithinMs = 20000) {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c) => (out.stdout += c));
  child.stderr.on('data', (c) => (out.stderr += c));
  const exit = new Promise((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + healthyWithinMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited early: ${out.stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`not healthy in time: ${out.stderr}`);
    }
    const res = await fetch(`${url}/api/health`).catch(() => null);
    if (res?.ok) break;
    await new Promise((done) => setTimeout(done, 50));
  }
  return { child, out, exit, url };
}

/** The owner's session cookie: set up with `password` on a fresh data dir, else logged in. */
export async function ownerSession(url, password) {
  const body = JSON.stringify({ password });
  const headers = { 'content-type': 'application/json' };
  let res = await fetch(`${url}/api/auth/setup`, {
    method: 'POST',
    headers,
    body,
  });
  if (res.status === 409)
    res = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers,
      body,
    });
  assert.ok(res.ok, `owner session: ${res.status}`);
  return res.headers.get('set-cookie').split(';')[0];
}
