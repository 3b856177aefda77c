// `npm run bench [name]` (through tools/scripts/bench.sh, which installs what is missing): builds the
// API and the console, then runs every benchmark below in turn, or those whose file name contains `name`.
// A failing benchmark does not stop the others; the run ends non-zero, naming the ones that failed.
import { execSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// One line per benchmark file in tools/bench.
const BENCHES = [
  'accounts.bench.ts',
  'attachments.bench.ts',
  'automations.bench.ts',
  'budget.bench.ts',
  'chat-cpu.bench.ts',
  'chat-search.bench.ts',
  'conversations.bench.ts',
  'data-growth.bench.ts',
  'foundation.bench.mjs',
  'memory.bench.ts',
  'prompt-budget.bench.ts',
  'usage.bench.ts',
  'voice.bench.ts',
  'whatsapp-qr.bench.mjs',
  'whatsapp.bench.ts',
];

/** A benchmark still running after this long is stopped and counted as failed. */
const BENCH_TIMEOUT_MS = 20 * 60_000;

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const env = {
  ...process.env,
  NX_NO_CLOUD: 'true',
  NX_DAEMON: 'false',
  NX_TUI: 'false',
};

const unlisted = readdirSync(here).filter(
  (f) => /\.bench\.(mjs|ts)$/.test(f) && !BENCHES.includes(f),
);
if (unlisted.length) {
  console.error(
    `tools/bench/run-all.mjs: add ${unlisted.join(', ')} to BENCHES.`,
  );
  process.exit(2);
}

const only = process.argv[2];
const selected = BENCHES.filter((file) => !only || file.includes(only));
if (!selected.length) {
  console.error(`No benchmark file name contains '${only}'.`);
  process.exit(2);
}

execSync('bash tools/ferretdb/build.sh', { cwd: root, stdio: 'inherit', env });
execSync('npx nx run-many -t build -p api web --outputStyle=static', {
  cwd: root,
  stdio: 'inherit',
  env,
});

// TypeScript benchmarks use the API's sources directly (ts-node, paths from the API's tsconfig).
const tsEnv = {
  ...env,
  TS_NODE_PROJECT: 'apps/api/tsconfig.app.json',
  TS_NODE_TRANSPILE_ONLY: 'true',
};
const failed = [];
for (const file of selected) {
  console.log(`\n## ${file}`);
  const args = file.endsWith('.ts')
    ? ['-r', 'ts-node/register', '-r', join(here, 'register-paths.cjs')]
    : [];
  const result = spawnSync(process.execPath, [...args, join(here, file)], {
    cwd: root,
    stdio: 'inherit',
    env: file.endsWith('.ts') ? tsEnv : env,
    timeout: BENCH_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  if (result.status !== 0) {
    const why = result.error
      ? result.error.message
      : result.signal
        ? `stopped by ${result.signal}`
        : `exit code ${result.status}; its output above says why`;
    console.log(`!! ${file} failed (${why})`);
    failed.push(file);
  }
}

const count = (n) => `${n} benchmark${n === 1 ? '' : 's'}`;
if (failed.length) {
  console.log(
    `\n${failed.length} of ${count(selected.length)} failed: ${failed.join(', ')}`,
  );
  process.exit(1);
}
console.log(`\n${count(selected.length)} ran, none failed.`);
