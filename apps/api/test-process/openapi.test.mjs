// The built server serves exactly the committed docs/openapi.json at /api/docs-json.
// Run by `nx run api:test-process` (builds the API and the database launcher first). The Jest spec
// apps/api/test/openapi.spec.ts checks the same on the app compiled by ts-jest; this one checks the build
// an operator runs, which is what the file documents.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { root, startServer, tempDir } from './support/built-server.mjs';

const dataDir = tempDir('metatron-proc-openapi-');

describe('docs/openapi.json', { timeout: 60000 }, () => {
  it('equals what the built server serves at /api/docs-json', async () => {
    const { child, exit, url } = await startServer(dataDir, {}, 30000);
    try {
      const res = await fetch(`${url}/api/docs-json`);
      assert.equal(res.status, 200);
      const committed = JSON.parse(
        readFileSync(join(root, 'docs/openapi.json'), 'utf8'),
      );
      assert.deepEqual(
        await res.json(),
        committed,
        'docs/openapi.json differs from the built app: run `npm run openapi`',
      );
    } finally {
      child.kill('SIGTERM');
      await exit;
    }
  });
});
