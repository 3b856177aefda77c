// Attachment figures (issue 6): upload a 10 MB file through POST /api/attachments to the built API
// (dist/apps/api/main.js, its own embedded database and DATA_DIR) and report the upload time and the
// peak RSS increase of the API process while it streams the file to disk (goal: ≤ 20 MB).
// Run by `npm run bench attachments` (ts-node) after the API build.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, setUpOwner, waitForHealth } from './built-api';

const root = process.cwd();
/** BENCH_SMOKE=1 (npm test): one small upload, no goal. */
const SMOKE = process.env['BENCH_SMOKE'] === '1';
const FILE_BYTES = (SMOKE ? 1 : 10) * 1024 * 1024;
const RUNS = SMOKE ? 1 : 3;

/** Resident set size of a process (Linux /proc), in bytes. */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** A PNG signature followed by random bytes: accepted as an image, and nothing compresses it. */
function fakePng(bytes: number): Buffer {
  const data = randomBytes(bytes);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(data);
  return data;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/apps/api/main.js'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ATTACHMENT_MAX_MB: '20',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const pid = child.pid as number;
  const url = `http://127.0.0.1:${port}`;
  try {
    let exited = false;
    child.once('exit', () => (exited = true));
    await waitForHealth(url, () => exited);
    const cookie = await setUpOwner(url);

    const upload = async (content: Buffer, name: string) => {
      const form = new FormData();
      form.append(
        'file',
        new Blob([new Uint8Array(content)], { type: 'image/png' }),
        name,
      );
      const res = await fetch(`${url}/api/attachments`, {
        method: 'POST',
        headers: { cookie },
        body: form,
      });
      if (res.status !== 201)
        throw new Error(`upload answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string; size: number };
    };

    // Warm-up: the upload path's code is loaded and JIT-compiled before measuring.
    await upload(fakePng(1024 * 1024), 'warm-up.png');
    for (let i = 0; i < 3; i++) {
      (global as { gc?: () => void }).gc?.();
      await new Promise((done) => setTimeout(done, 200));
    }

    console.log(
      `POST /api/attachments, ${mb(FILE_BYTES)} file, ${RUNS} runs (API process RSS sampled every 2 ms):`,
    );
    const times: number[] = [];
    const increases: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const file = fakePng(FILE_BYTES);
      await new Promise((done) => setTimeout(done, 300));
      const before = rss(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 2);
      const started = performance.now();
      const body = await upload(file, `bench-${run}.png`);
      const ms = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, rss(pid));
      if (body.size !== FILE_BYTES)
        throw new Error(`stored ${body.size} bytes`);
      const files = statSync(join(dataDir, 'attachments')).isDirectory();
      if (!files) throw new Error('no attachments directory');
      times.push(ms);
      increases.push(peak - before);
      console.log(
        `  run ${run}: ${ms.toFixed(0)} ms (${(FILE_BYTES / 1048576 / (ms / 1000)).toFixed(0)} MB/s), RSS ${mb(before)} → peak ${mb(peak)} (+${mb(peak - before)})`,
      );
    }
    const worst = Math.max(...increases);
    console.log(
      `upload time median ${[...times].sort((a, b) => a - b)[Math.floor(RUNS / 2)].toFixed(0)} ms; peak RSS increase max ${mb(worst)} ` +
        `(goal ≤ 20 MB: ${worst <= 20 * 1048576 ? 'met' : 'NOT met'})`,
    );
    if (!SMOKE && worst > 20 * 1048576) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
