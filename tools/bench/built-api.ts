// The built API (dist/apps/api/main.js) as its own process, for benches that measure it from outside
// (its CPU from /proc, its time to first token): started on a free loopback port with a fresh DATA_DIR,
// the owner set up and the OpenAI key pointed at the fake provider.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeLlmServer } from '../fake-llm/fake-llm-server';

/** The built API to start; BENCH_API_MAIN points at another build (a copy of dist/ from before a change) to compare. */
export const API_MAIN = process.env.BENCH_API_MAIN ?? 'dist/apps/api/main.js';
/** What tools/bench/start-options.cjs reads from tools/scripts/start.sh (loaded by path: also from dist/bench). */
const { startOptions } = createRequire(__filename)(
  join(process.cwd(), 'tools/bench/start-options.cjs'),
) as {
  startOptions(): { nodeArgs: string[]; env: Record<string, string> };
};
const START_OPTIONS = startOptions();
/** Node's flags as `npm start` runs the server (tools/scripts/start.sh): a bench measures what the owner runs. */
export const START_NODE_ARGS: readonly string[] = START_OPTIONS.nodeArgs;
/** glibc's malloc limits `npm start` sets (tools/scripts/start.sh); a value in the bench's environment wins. */
export const START_ENV: Readonly<Record<string, string>> = START_OPTIONS.env;
const PASSWORD = 'bench password 1';

export interface BuiltApi {
  url: string;
  cookie: string;
  child: ChildProcess;
  dataDir: string;
}

/** A free loopback port for a server the bench starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts the built API; `nodeArgs` go before main.js (a profiler), `settings` join the first PATCH. */
export async function startBuiltApi(
  fake: FakeLlmServer,
  options: { nodeArgs?: string[]; settings?: Record<string, unknown> } = {},
): Promise<BuiltApi> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...START_NODE_ARGS, ...(options.nodeArgs ?? []), API_MAIN],
    {
      cwd: process.cwd(),
      env: {
        ...START_ENV,
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        OPENAI_BASE_URL: fake.openaiBaseUrl,
        GOOGLE_GEMINI_BASE_URL: fake.geminiBaseUrl,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitForHealth(url, () => exited);
  const cookie = await setUpOwner(url, {
    openaiApiKey: 'sk-bench-000000000000',
    primaryModel: 'gpt-4.1-mini',
    ...options.settings,
  });
  return { url, cookie, child, dataDir };
}

/** Polls `/api/health` until the API answers; throws once `exited()` says the process ended. */
export async function waitForHealth(
  url: string,
  exited: () => boolean,
): Promise<void> {
  for (;;) {
    if (exited()) throw new Error(`the API (${url}) exited while starting`);
    const up = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** Sets the owner's password on a fresh API and returns the session cookie; `settings` (if any) are saved next. */
export async function setUpOwner(
  url: string,
  settings?: Record<string, unknown>,
): Promise<string> {
  const setup = await fetch(`${url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: PASSWORD }),
  });
  const cookie = String(setup.headers.get('set-cookie')).split(';')[0];
  if (settings) {
    const patch = await fetch(`${url}/api/settings`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(settings),
    });
    if (!patch.ok) throw new Error(`settings: ${patch.status}`);
  }
  return cookie;
}
