import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { StartupError } from '../startup-error';

export interface EmbeddedDatabaseOptions {
  /** Path of the built `ferretdb-launcher`. */
  binPath: string;
  /** The database files go to `<dataDir>/db`. */
  dataDir: string;
  /** How long to wait for the `ready` line. */
  readyTimeoutMs?: number;
}

export interface EmbeddedDatabaseExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The launcher's last line on stderr, when it said anything. */
  lastError: string | undefined;
}

/**
 * The embedded FerretDB server (SQLite files under the data dir) as a child process.
 * It listens on a free loopback port and ends with us: it gets SIGTERM on stop,
 * and the launcher itself exits when its stdin closes or its parent dies.
 */
export class EmbeddedDatabase {
  private stopping = false;
  private exited = false;
  private exitListeners: Array<(exit: EmbeddedDatabaseExit) => void> = [];
  private lastError: string | undefined;
  private readonly exitPromise: Promise<EmbeddedDatabaseExit>;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
    readonly uri: string,
  ) {
    this.exitPromise = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = true;
        const exit = { code, signal, lastError: this.lastError };
        resolve(exit);
        if (!this.stopping) this.exitListeners.forEach((listener) => listener(exit));
      });
    });
  }

  static async start(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    try {
      accessSync(options.binPath, constants.X_OK);
    } catch {
      throw new StartupError(
        `The embedded database is not built (${options.binPath} is missing). ` +
          'Run `npm start`, which builds it with the Go toolchain, or set MONGODB_URI to use an existing MongoDB.',
      );
    }
    const dbDir = join(options.dataDir, 'db');
    mkdirSync(dbDir, { recursive: true });

    const child = spawn(
      options.binPath,
      ['--listen-addr', '127.0.0.1:0', '--data-dir', dbDir, '--exit-on-stdin-eof'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const stderrLines: string[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderrLines.push(line);
      if (stderrLines.length > 20) stderrLines.shift();
    });

    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new StartupError(`The embedded database did not start within ${options.readyTimeoutMs ?? 15000} ms.`));
      }, options.readyTimeoutMs ?? 15000);
      const lines = createInterface({ input: child.stdout });
      lines.once('line', (line) => {
        clearTimeout(timer);
        const match = /^ready (\S+)$/.exec(line.trim());
        if (match) resolve(match[1]);
        else reject(new StartupError(`The embedded database printed an unexpected first line: ${line}`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new StartupError(`The embedded database could not be started: ${error.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        // Give the stderr reader a tick to collect the launcher's reason.
        setImmediate(() => {
          const reason = stderrLines.at(-1)?.replace(/^ferretdb-launcher: /, '') ?? `exit code ${code}`;
          reject(new StartupError(`The embedded database failed to start: ${reason}`));
        });
      });
    });

    const database = new EmbeddedDatabase(child, `mongodb://${address}/`);
    createInterface({ input: child.stderr }).on('line', (line) => {
      // FerretDB's own log lines are noise here; the launcher prefixes what matters.
      if (line.startsWith('ferretdb-launcher: ')) database.lastError = line.slice('ferretdb-launcher: '.length);
    });
    return database;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** Called when the server exits without being asked to. */
  onUnexpectedExit(listener: (exit: EmbeddedDatabaseExit) => void): void {
    this.exitListeners.push(listener);
  }

  /** SIGTERM, then SIGKILL after `graceMs`. Safe to call twice. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    if (this.exited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }
}

/** Fails early with a clear line when the data dir cannot be used. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
  } catch (error) {
    throw new StartupError(`DATA_DIR ${dataDir} is not a writable directory: ${(error as Error).message}`);
  }
}
