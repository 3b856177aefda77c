// The memory an API process holds for its data, measured from outside the process that made the data:
// the built API (dist/apps/api/main.js) started on a database, left until its memory index and vectors
// are loaded, then asked (through tools/bench/memory-probe.cjs) for its settled memory. Started once on
// the bench's database and once on an empty one, the difference is what the data costs the app; the
// bench's own set-up (inserting 100,000 messages and vectors) never counts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  API_MAIN,
  START_ENV,
  START_NODE_ARGS,
  freePort,
  setUpOwner,
  waitForHealth,
} from './built-api';

export interface ApiMemory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8 heap spaces' used bytes, by space name. */
  spaces: Record<string, number>;
  /** The heap V8 holds from the system (used or not). */
  heapCommitted: number;
  /** RSS right after the first collection, before the idle wait. */
  rssAtOnce: number;
  /** Documents in the memory index and vectors in memory, as the API logged them. */
  documents: number;
  vectors: number;
  /** From the start of the process until both were loaded. */
  readyMs: number;
}

interface ProbeSample {
  usage: NodeJS.MemoryUsage;
  spaces: Array<{ name: string; used: number; size: number }>;
}
type ProbeAnswer = ProbeSample & { atOnce: ProbeSample };

const READY_TIMEOUT_MS = 600_000;

/**
 * Starts the built API on `mongodbUri` (a database of the bench's FerretDB) with `dataDir` (the bench
 * app's, for its snapshot and keys; a fresh one when omitted, the owner then set up with the bench key),
 * embeddings on against `openaiBaseUrl`, and returns its memory once index and vectors are loaded.
 */
export async function measureApiMemory(options: {
  mongodbUri: string;
  dataDir?: string;
  openaiBaseUrl: string;
}): Promise<ApiMemory> {
  if (!existsSync(API_MAIN))
    throw new Error(
      `${API_MAIN} is missing: build the API first (npm run bench does)`,
    );
  const dataDir =
    options.dataDir ?? mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...START_NODE_ARGS,
      '--expose-gc',
      '-r',
      // Beside this file in the sources (a smoke run compiles this one elsewhere).
      join(process.cwd(), 'tools/bench/memory-probe.cjs'),
      API_MAIN,
    ],
    {
      cwd: process.cwd(),
      env: {
        ...START_ENV,
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        MONGODB_URI: options.mongodbUri,
        LOG_LEVEL: 'log',
        OPENAI_BASE_URL: options.openaiBaseUrl,
        MEMORY_EMBEDDINGS: 'auto',
        BENCH_PROBE_IDLE_MS:
          process.env['BENCH_SMOKE'] === '1' ? '1000' : '12000',
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  let documents = -1;
  let vectors = -1;
  let output = '';
  let exited = false;
  child.once('exit', () => (exited = true));
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-4096);
    for (const m of chunk.matchAll(/Memory index: (\d+) documents/g))
      documents = Number(m[1]);
    for (const m of chunk.matchAll(/Memory embeddings: (\d+) vectors/g))
      vectors = Number(m[1]);
  });
  try {
    if (!options.dataDir) {
      await waitForHealth(url, () => exited);
      await setUpOwner(url, {
        openaiApiKey: 'sk-bench-000000000000',
        primaryModel: 'gpt-4.1-mini',
      });
    }
    while (documents < 0 || vectors < 0) {
      if (exited) throw new Error(`the API exited: ${output}`);
      if (performance.now() - t0 > READY_TIMEOUT_MS)
        throw new Error(
          `the API's memory index or vectors not loaded in ${READY_TIMEOUT_MS} ms: ${output}`,
        );
      await new Promise((done) => setTimeout(done, 50));
    }
    const readyMs = performance.now() - t0;
    const answer = await new Promise<ProbeAnswer>((resolve, reject) => {
      child.once('message', (m) => resolve(m as ProbeAnswer));
      child.once('exit', () => reject(new Error('the API exited')));
      child.send('measure');
    });
    return {
      rss: answer.usage.rss,
      heapUsed: answer.usage.heapUsed,
      external: answer.usage.external,
      arrayBuffers: answer.usage.arrayBuffers,
      spaces: Object.fromEntries(answer.spaces.map((s) => [s.name, s.used])),
      heapCommitted: answer.spaces.reduce((sum, s) => sum + s.size, 0),
      rssAtOnce: answer.atOnce.usage.rss,
      documents,
      vectors,
      readyMs,
    };
  } finally {
    if (!exited) {
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
    }
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
