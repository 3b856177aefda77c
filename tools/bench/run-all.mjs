// `npm run bench`: builds what the benchmarks need, then runs every tools/bench/*.bench.mjs in turn.
import { execSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const env = { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false', NX_TUI: 'false' };
execSync('bash tools/ferretdb/build.sh', { cwd: root, stdio: 'inherit', env });
execSync('npx nx run-many -t build -p api web --outputStyle=static', { cwd: root, stdio: 'inherit', env });

const only = process.argv[2];
for (const file of readdirSync(here).filter((f) => f.endsWith('.bench.mjs')).sort()) {
  if (only && !file.includes(only)) continue;
  console.log(`\n## ${file}`);
  execSync(`node ${join(here, file)}`, { cwd: root, stdio: 'inherit', env });
}
