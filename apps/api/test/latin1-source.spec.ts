// The build step that keeps server.js Latin-1 (apps/api/build/latin1-source.cjs, used by webpack.config.js):
// every rewritten piece must mean what it meant, and what cannot be rewritten safely must stop the build.
// apps/api/test-process/bundle.test.mjs checks the built files themselves.
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';

// A CommonJS build script, loaded by Node's own require (not compiled by ts-jest).
const { toLatin1Source } = createRequire(__filename)(
  '../build/latin1-source.cjs',
) as { toLatin1Source(code: string): string };

const isLatin1 = (text: string) => !/[\u0100-\uffff]/.test(text);
/** Runs `code` and returns its `result` variable. */
const resultOf = (code: string): unknown => {
  const sandbox: { result?: unknown } = {};
  runInNewContext(code, sandbox);
  return sandbox.result;
};

describe('toLatin1Source', () => {
  const rewritten: Array<[what: string, code: string]> = [
    ['a string', 'var result = "Test a stored account’s connection…";'],
    ['a single-quoted string', "var result = '••••' + '→';"],
    ['a character outside the BMP', "var result = '👍 done';"],
    ['a template', 'var n = 3; var result = `${n} → ${n + 1} – ok`;'],
    [
      'a template with a nested one',
      'var n = 1; var result = `a ─ ${`b → ${n}`} c`;',
    ],
    ['a regex', 'var result = "a→b–c".replace(/[→–]/g, "-");'],
    ['a unicode regex, astral', 'var result = /^👍+$/u.test("👍👍");'],
    ['a regex class range', 'var result = /[─-╿]/.test("│");'],
    [
      'a comment of each kind',
      '// ── section ──\n/* a → b */ var result = 1; /** • */',
    ],
  ];
  it.each(rewritten)('%s: Latin-1 after, same result', (_what, code) => {
    const out = toLatin1Source(code);
    expect(isLatin1(out)).toBe(true);
    expect(out).not.toBe(code);
    expect(resultOf(out)).toEqual(resultOf(code));
  });

  it('leaves Latin-1 code, escapes already written and accented text as they are', () => {
    const code = 'var result = "caf\\u00e9 é ×" + /\\u2192/.source; // déjà';
    expect(toLatin1Source(code)).toBe(code);
  });

  it.each([
    ['a tagged template (its tag sees the raw text)', 'String.raw`a → b`;'],
    ['a name', 'var π = 3;'],
  ])('stops on %s', (_what, code) => {
    expect(() => toLatin1Source(code)).toThrow(/above U\+00FF/);
  });

  it('keeps the line structure, so stack traces keep their line numbers', () => {
    const code = 'var a = "→";\n// ──\nvar result = `•\n•`;\n';
    expect(toLatin1Source(code).split('\n')).toHaveLength(
      code.split('\n').length,
    );
  });
});
