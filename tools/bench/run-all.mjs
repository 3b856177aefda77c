// `npm run bench [name]` (through tools/scripts/bench.sh, which installs what is missing): builds the
// API and the console, then runs every benchmark below in turn, or those whose file name contains `name`.
// A failing benchmark does not stop the others; the run ends non-zero, naming the ones that failed.
// `--smoke` (part of `npm test`, after its build): every benchmark with small sizes and no goals
// (BENCH_SMOKE=1), so that none can rot unnoticed; the TypeScript ones compiled once with tsc
// (tools/bench/tsconfig.smoke.json, no type check) instead of ts-node compiling the app for each.
import { execSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
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
  'voice-relay.bench.ts',
  'whatsapp-qr.bench.mjs',
  'whatsapp.bench.ts',
];

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');

/** A benchmark still running after this long is stopped and counted as failed. */
const BENCH_TIMEOUT_MS = (smoke ? 3 : 20) * 60_000;

/** Small sizes for a smoke run, where a benchmark reads its sizes from the environment. */
const SMOKE_ENV = {
  'chat-search.bench.ts': {
    BENCH_CHATS: '20',
    BENCH_MESSAGES: '200',
    BENCH_ROUNDS: '2',
  },
  'data-growth.bench.ts': { BENCH_SIZES: '200', BENCH_ROUNDS: '2' },
  'memory.bench.ts': {
    BENCH_MEMORY_MESSAGES: '300',
    BENCH_MEMORY_CHATS: '5',
    BENCH_MEMORY_NOTES: '50',
    BENCH_ROUNDS: '3',
  },
  'whatsapp.bench.ts': { BENCH_CONTACTS: '3', BENCH_PER_CONTACT: '2' },
};

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

const only = args.find((arg) => !arg.startsWith('--'));
const selected = BENCHES.filter((file) => !only || file.includes(only));
if (!selected.length) {
  console.error(`No benchmark file name contains '${only}'.`);
  process.exit(2);
}

const compiled = join(root, 'dist/bench');
if (smoke) {
  // `npm test` has built the API, the console and the database launcher already.
  rmSync(compiled, { recursive: true, force: true });
  execSync('npx tsc -p tools/bench/tsconfig.smoke.json', {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  // Found next to the compiled file (__dirname): the mail servers' downloads.
  const cache = join(root, 'tools/mail-servers/.cache');
  if (existsSync(cache))
    symlinkSync(cache, join(compiled, 'tools/mail-servers/.cache'));
} else {
  execSync('bash tools/ferretdb/build.sh', {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  execSync('npx nx run-many -t build -p api web --outputStyle=static', {
    cwd: root,
    stdio: 'inherit',
    env,
  });
}

// TypeScript benchmarks use the API's sources directly (ts-node, paths from the API's tsconfig).
const tsEnv = {
  ...env,
  TS_NODE_PROJECT: 'apps/api/tsconfig.app.json',
  TS_NODE_TRANSPILE_ONLY: 'true',
};
/** Smoke runs go two at a time (output kept until each ends): most of a run is waiting on its database. */
const SMOKE_PARALLEL = 2;

function command(file) {
  const ts = file.endsWith('.ts');
  const script = !ts
    ? [join(here, file)]
    : smoke
      ? [
          '-r',
          join(here, 'register-compiled-paths.cjs'),
          join(compiled, 'tools/bench', file.replace(/\.ts$/, '.js')),
        ]
      : [
          '-r',
          'ts-node/register',
          '-r',
          join(here, 'register-paths.cjs'),
          join(here, file),
        ];
  return {
    script,
    env: {
      ...(ts && !smoke ? tsEnv : env),
      ...(smoke ? { BENCH_SMOKE: '1', ...SMOKE_ENV[file] } : {}),
    },
  };
}

/** Runs one benchmark; resolves to why it failed, or null. */
function run(file) {
  const { script, env: benchEnv } = command(file);
  if (!smoke) {
    console.log(`\n## ${file}`);
    const result = spawnSync(process.execPath, script, {
      cwd: root,
      stdio: 'inherit',
      env: benchEnv,
      timeout: BENCH_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    return Promise.resolve(
      result.status === 0
        ? null
        : result.error
          ? result.error.message
          : result.signal
            ? `stopped by ${result.signal}`
            : `exit code ${result.status}; its output above says why`,
    );
  }
  const started = performance.now();
  const child = spawn(process.execPath, script, {
    cwd: root,
    env: benchEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), BENCH_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n## ${file} (smoke, ${seconds} s)\n${output}`);
      resolve(
        code === 0
          ? null
          : signal
            ? `stopped by ${signal}`
            : `exit code ${code}; its output above says why`,
      );
    });
  });
}

const failed = [];
const runStarted = performance.now();
const queue = [...selected];
await Promise.all(
  Array.from({ length: smoke ? SMOKE_PARALLEL : 1 }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const why = await run(file);
      if (why) {
        console.log(`!! ${file} failed (${why})`);
        failed.push(file);
      }
    }
  }),
);

const count = (n) => `${n} benchmark${n === 1 ? '' : 's'}`;
if (failed.length) {
  console.log(
    `\n${failed.length} of ${count(selected.length)} failed: ${failed.join(', ')}`,
  );
  process.exit(1);
}
console.log(
  `\n${count(selected.length)} ran${smoke ? ` (smoke, ${((performance.now() - runStarted) / 1000).toFixed(0)} s)` : ''}, none failed.`,
);
