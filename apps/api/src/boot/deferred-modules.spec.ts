// The launcher's stand-ins for modules loaded at their first use. They live in Node's own require
// cache, which Jest's module registry replaces, so each case runs in a child Node process on the
// transpiled module.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transpileModule, ModuleKind } from 'typescript';

const root = join(__dirname, '../../../..');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'deferred-modules-'));
  const source = readFileSync(join(__dirname, 'deferred-modules.ts'), 'utf8');
  const { outputText } = transpileModule(source, {
    compilerOptions: { module: ModuleKind.CommonJS, esModuleInterop: true },
  });
  writeFileSync(join(dir, 'deferred-modules.js'), outputText);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` in a child process with `defer`, `requireVia` and `loaded(path)`; returns what it prints (JSON). */
function inChild(body: string): unknown {
  const script = `
    const Module = require('node:module');
    const { deferModule, DEFERRED_MODULES } = require(${JSON.stringify(join(dir, 'deferred-modules.js'))});
    const from = ${JSON.stringify(join(root, 'apps/api/src/main.ts'))};
    const requireVia = (via) => via.reduce((r, name) => Module.createRequire(r.resolve(name)), Module.createRequire(from));
    const loaded = (path) => Boolean(Module._cache[path]);
    const out = (() => { ${body} })();
    process.stdout.write(JSON.stringify(out));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['-e', script], { cwd: root }).toString(),
  );
}

describe('deferModule', () => {
  it('the MongoDB driver gets saslprep, whose tables load at its first call, and it works as before', () => {
    expect(
      inChild(`
        const r = requireVia(['mongodb']);
        const tables = require('node:path').join(require('node:path').dirname(r.resolve('@mongodb-js/saslprep')), 'code-points-data.js');
        const deferred = deferModule(from, ['mongodb'], '@mongodb-js/saslprep');
        const mod = r('@mongodb-js/saslprep');
        const before = loaded(tables);
        // RFC 4013: a soft hyphen maps to nothing, U+00AA to "a"; a control character is refused.
        const results = [mod.saslprep('I\\u00adX'), mod.saslprep('\\u00aa')];
        let refused = false;
        try { mod.saslprep('\\u0007'); } catch { refused = true; }
        const real = r('@mongodb-js/saslprep');
        return { deferred, before, after: loaded(tables), results, refused, replaced: real !== mod && real.saslprep === mod.saslprep };
      `),
    ).toEqual({
      deferred: true,
      before: false,
      after: true,
      results: ['IX', 'a'],
      refused: true,
      replaced: true,
    });
  });

  it('the driver loads without its saslprep tables, and connects to nothing by loading', () => {
    expect(
      inChild(`
        const r = requireVia(['mongodb']);
        const tables = require('node:path').join(require('node:path').dirname(r.resolve('@mongodb-js/saslprep')), 'code-points-data.js');
        deferModule(from, ['mongodb'], '@mongodb-js/saslprep');
        const { MongoClient } = r('mongodb');
        return { client: typeof MongoClient, tables: loaded(tables) };
      `),
    ).toEqual({ client: 'function', tables: false });
  });

  it('leaves a module already loaded, or one it cannot find, as it is', () => {
    expect(
      inChild(`
        requireVia(['mongodb'])('@mongodb-js/saslprep');
        return [
          deferModule(from, ['mongodb'], '@mongodb-js/saslprep'),
          deferModule(from, ['no-such-package'], 'x'),
          deferModule(from, ['mongodb'], 'no-such-module'),
        ];
      `),
    ).toEqual([false, false, false]);
  });

  it('every listed module resolves from the server', () => {
    expect(
      inChild(`
        return DEFERRED_MODULES.map(([via, request]) => { try { requireVia(via).resolve(request); return true; } catch { return request; } });
      `),
    ).toEqual([true, true]);
  });
});
