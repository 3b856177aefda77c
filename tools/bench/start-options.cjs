// What `npm start` runs the server with, read from tools/scripts/start.sh itself (its one source), so
// that a bench starting the built API measures what the owner runs: Node's flags (the `exec node …
// dist/apps/api/main.js` line) and the environment it sets when unset (`export NAME="${NAME:-value}"`).
// Throws when start.sh no longer has that shape, so a change there cannot leave the benches behind
// unnoticed (their smoke run is part of `npm test`). CommonJS, by absolute path: the TypeScript benches
// (run by ts-node or compiled to dist/bench) and the .mjs ones load the same file.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const START_SCRIPT = join(__dirname, '../scripts/start.sh');

/** @returns {{ nodeArgs: string[], env: Record<string, string> }} */
function startOptions(script = readFileSync(START_SCRIPT, 'utf8')) {
  const exec =
    /^exec node((?: --?[\w-]+(?:=\S+)?)*) dist\/apps\/api\/main\.js$/m.exec(
      script,
    );
  if (!exec)
    throw new Error(
      `${START_SCRIPT}: no "exec node [flags] dist/apps/api/main.js" line`,
    );
  const env = {};
  for (const [, name, same, value] of script.matchAll(
    /^export (\w+)="\$\{(\w+):-([^}"]*)\}"$/gm,
  )) {
    if (name !== same)
      throw new Error(`${START_SCRIPT}: ${name} defaults from ${same}`);
    env[name] = value;
  }
  return { nodeArgs: exec[1].trim().split(' ').filter(Boolean), env };
}

module.exports = { START_SCRIPT, startOptions };
