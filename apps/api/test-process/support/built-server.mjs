// Shared by the process tests: where the built server is, free loopback ports, and temp data dirs
// that are removed when the test file ends.
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
