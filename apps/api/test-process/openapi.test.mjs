// The built server serves exactly the committed docs/openapi.json at /api/docs-json.
// Run by `nx run api:test-process` (builds the API and the database launcher first). The Jest spec
// apps/api/test/openapi.spec.ts checks the same on the app compiled by ts-jest; this one checks the build
// an operator runs, which is what the file documents.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, main, root, tempDir } from './support/built-server.mjs';

const dataDir = tempDir('metatron-proc-openapi-');

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
