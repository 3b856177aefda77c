// The built server.js is Latin-1 text (apps/api/build/latin1-source.cjs, a step of apps/api/webpack.config.js):
// V8 keeps a script's source in memory, and one character above U+00FF makes it keep all of it at two
// bytes a character (~2.5 MB more idle heap). Run by `nx run api:test-process`, after the build.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { root } from './support/built-server.mjs';

describe('dist/apps/api', () => {
  for (const file of ['main.js', 'server.js'])
    it(`${file} holds no character above U+00FF`, () => {
      const text = readFileSync(join(root, 'dist/apps/api', file), 'utf8');
      const at = text.search(/[\u0100-\uffff]/);
      assert.equal(
        at,
        -1,
        `a character above U+00FF at ${at}: ${JSON.stringify(text.slice(at - 40, at + 10))}`,
      );
    });
});
