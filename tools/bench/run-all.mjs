// `npm run bench`: builds what the benchmarks need, then runs every tools/bench/*.bench.{mjs,ts} in turn.
import { execSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const env = {
  ...process.env,
  NX_NO_CLOUD: 'true',
  NX_DAEMON: 'false',
  NX_TUI: 'false',
};
execSync('bash tools/ferretdb/build.sh', { cwd: root, stdio: 'inherit', env });
execSync('npx nx run-many -t build -p api web --outputStyle=static', {
  cwd: root,
  stdio: 'inherit',
  env,
});

const only = process.argv[2];
// TypeScript benchmarks use the API's sources directly (ts-node, paths from the API's tsconfig).
const tsEnv = {
  ...env,
  TS_NODE_PROJECT: 'apps/api/tsconfig.app.json',
  TS_NODE_TRANSPILE_ONLY: 'true',
};
for (const file of readdirSync(here)
  .filter((f) => /\.bench\.(mjs|ts)$/.test(f))
  .sort()) {
  if (only && !file.includes(only)) continue;
  console.log(`\n## ${file}`);
  const command = file.endsWith('.ts')
    ? `node -r ts-node/register -r ${join(here, 'register-paths.cjs')} ${join(here, file)}`
    : `node ${join(here, file)}`;
  execSync(command, {
    cwd: root,
    stdio: 'inherit',
    env: file.endsWith('.ts') ? tsEnv : env,
  });
}
