import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every API source file (specs aside) under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')
      ? [path]
      : [];
  });
}

describe('time readings', () => {
  it('go through the Clock: no Date.now() or argument-less new Date() elsewhere in the API', () => {
    const root = join(__dirname, '..');
    const readings = /\bDate\.now\(\)|\bnew Date\(\s*\)/;
    const offenders = sources(root)
      .filter((file) => relative(root, file) !== join('clock', 'clock.ts'))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${relative(root, file)}:${i + 1}` }))
          .filter(({ line }) => readings.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });
});
