import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';

export const WORKSPACE_ROOT = resolve(__dirname, '../../../..');

export interface RunningApp {
  baseURL: string;
  dataDir: string;
  /** Everything the server printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
  /** A crash: SIGKILL, no shutdown hooks (what was streaming stays "streaming" in the database). */
  kill(): Promise<void>;
}

export interface StartAppOptions {
  /** Extra environment (e.g. provider base URLs of fake upstreams in later suites). */
  env?: Record<string, string>;
  /** Reuse a data dir (restart tests); a fresh temp dir otherwise. */
  dataDir?: string;
  /** A fixed port (a restart that the open console should find again); a free one otherwise. */
  port?: number;
  timeoutMs?: number;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/**
 * Boots the built MetatronOS (dist/apps/api/main.js, serving dist/apps/web) on a
 * free loopback port with its embedded database, and waits until /api/health
 * says ok. `nx e2e web-e2e` builds both apps and the database launcher first.
 */
export async function startApp(
  options: StartAppOptions = {},
): Promise<RunningApp> {
  const port = options.port ?? (await freePort());
  const ownDataDir = !options.dataDir;
  const dataDir =
    options.dataDir ?? mkdtempSync(join(tmpdir(), 'metatron-e2e-'));
  const baseURL = `http://127.0.0.1:${port}`;
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    [join(WORKSPACE_ROOT, 'dist/apps/api/main.js')],
    {
      cwd: WORKSPACE_ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        // As in the API specs: no background embedding calls (they spend and count as usage) unless a spec asks.
        MEMORY_EMBEDDINGS: 'off',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => done(code)),
  );

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `MetatronOS exited with ${child.exitCode} before it was healthy:\n${output}`,
      );
    try {
      const res = await fetch(`${baseURL}/api/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `MetatronOS was not healthy within ${options.timeoutMs ?? 30_000} ms:\n${output}`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }

  return {
    baseURL,
    dataDir,
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
