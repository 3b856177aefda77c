// The built server serves exactly the committed docs/openapi.json at /api/docs-json.
// Run by `nx run api:test-process` (builds the API and the database launcher first). The Jest spec
// apps/api/test/openapi.spec.ts checks the same on the app compiled by ts-jest; this one checks the build
// an operator runs, which is what the file documents.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';

const root = resolve(import.meta.dirname, '../../..');
const main = join(root, 'dist/apps/api/main.js');
const dataDir = mkdtempSync(join(tmpdir(), 'metatron-proc-openapi-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

async function freePort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

describe('docs/openapi.json', { timeout: 60000 }, () => {
  it('equals what the built server serves at /api/docs-json', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [main], {
      cwd: root,
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        PORT: String(port),
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise((done) => child.once('exit', done));
    try {
      let served;
      const deadline = Date.now() + 30000;
      while (!served && Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`exited: ${stderr}`);
        try {
          const res = await fetch(`http://127.0.0.1:${port}/api/docs-json`);
          if (res.ok) served = await res.json();
        } catch {
          await new Promise((done) => setTimeout(done, 100));
        }
      }
      assert.ok(served, `no document in time: ${stderr}`);
      const committed = JSON.parse(
        readFileSync(join(root, 'docs/openapi.json'), 'utf8'),
      );
      assert.deepEqual(
        served,
        committed,
        'docs/openapi.json differs from the built app: run `npm run openapi`',
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
