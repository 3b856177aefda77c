import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { StartupError } from '../startup-error';

export interface EmbeddedDatabaseOptions {
  /** Path of the built `ferretdb-launcher`. */
  binPath: string;
  /** The database files go to `<dataDir>/db`. */
  dataDir: string;
  /** How long to wait for the `ready` line. */
  readyTimeoutMs?: number;
  /**
   * Unset (the default): listen only on a Unix domain socket in a 0700 directory (see
   * `embeddedSocketPath`). A number: listen on that loopback TCP port instead, 0 = a free one;
   * anyone on the machine can then connect. Windows has no Unix sockets and always uses TCP.
   */
  tcpPort?: number;
}

export interface EmbeddedDatabaseExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The launcher's last line on stderr, when it said anything. */
  lastError: string | undefined;
}

type LauncherProcess = ChildProcessByStdio<Writable, Readable, Readable>;
const LAUNCHER_PREFIX = 'ferretdb-launcher: ';

/**
 * The longest Unix socket path the kernel takes (sun_path less its NUL): 107 bytes on
 * Linux, 103 on macOS and the BSDs.
 */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;
const SOCKET_NAME = 'ferretdb.sock'; // the driver treats a host ending in .sock as a socket path

/**
 * Where the embedded database's Unix socket goes: `<dataDir>/run/ferretdb.sock`, or, when
 * that path is too long for a socket, `metatronos-<uid>-<hash of the data dir>/ferretdb.sock`
 * under `$XDG_RUNTIME_DIR` (or the temp dir). The launcher creates the directory 0700 and
 * refuses one that belongs to another user, so only this OS user can connect.
 */
export function embeddedSocketPath(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const absolute = resolve(dataDir);
  const inDataDir = join(absolute, 'run', SOCKET_NAME);
  if (Buffer.byteLength(inDataDir) <= MAX_SOCKET_PATH_BYTES) return inDataDir;
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 16);
  const dirName = `metatronos-${process.getuid?.() ?? 'user'}-${hash}`;
  const bases = [env['XDG_RUNTIME_DIR'], tmpdir(), '/tmp'].filter(
    (base): base is string => !!base && isAbsolute(base) && isDirectory(base),
  );
  const candidates = bases.map((base) => join(base, dirName, SOCKET_NAME));
  // The launcher names a path that is still too long in one clear line.
  return (
    candidates.find(
      (path) => Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES,
    ) ??
    candidates[0] ??
    inDataDir
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The embedded FerretDB server (SQLite files under the data dir) as a child process.
 * By default it listens only on a Unix domain socket in a directory only this OS user
 * can enter (FerretDB 1.x has no authentication, so a loopback TCP port would be open
 * to every local user); TCP on a loopback port is an explicit opt-in (`tcpPort`).
 * It keeps its address across restarts, and ends with us: it gets SIGTERM on stop,
 * and the launcher itself exits when its stdin closes or its parent dies.
 */
export class EmbeddedDatabase {
  private stopping = false;
  private exited = false;
  private exitListeners: Array<(exit: EmbeddedDatabaseExit) => void> = [];
  private lastError: string | undefined;
  private exitPromise!: Promise<EmbeddedDatabaseExit>;
  private child!: LauncherProcess;

  private constructor(
    private readonly options: EmbeddedDatabaseOptions,
    child: LauncherProcess,
    /** `127.0.0.1:<port>` or the socket's absolute path, fixed for the life of this object. */
    private readonly address: string,
  ) {
    this.attach(child);
  }

  static async start(
    options: EmbeddedDatabaseOptions,
  ): Promise<EmbeddedDatabase> {
    try {
      accessSync(options.binPath, constants.X_OK);
    } catch {
      throw new StartupError(
        `The embedded database is not built (${options.binPath} is missing). ` +
          'Run `npm start`, which builds it with the Go toolchain, or set MONGODB_URI to use an existing MongoDB.',
      );
    }
    mkdirSync(join(options.dataDir, 'db'), { recursive: true, mode: 0o700 });
    const tcpPort =
      options.tcpPort ?? (process.platform === 'win32' ? 0 : undefined);
    const { child, address } = await launch(
      options,
      tcpPort === undefined
        ? { unix: embeddedSocketPath(options.dataDir) }
        : { tcp: `127.0.0.1:${tcpPort}` },
    );
    return new EmbeddedDatabase(options, child, address);
  }

  /** `mongodb://%2F…%2Fferretdb.sock/` on the socket, `mongodb://127.0.0.1:<port>/` on TCP. */
  get uri(): string {
    return `mongodb://${this.socketPath ? encodeURIComponent(this.socketPath) : this.address}/`;
  }

  /** The Unix socket's path, or undefined when the server listens on TCP. */
  get socketPath(): string | undefined {
    return this.address.startsWith('/') ? this.address : undefined;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** Called each time the server exits without being asked to. */
  onUnexpectedExit(listener: (exit: EmbeddedDatabaseExit) => void): void {
    this.exitListeners.push(listener);
  }

  /** Starts the server again after it died, on the same address and data. */
  async restart(): Promise<void> {
    if (this.stopping)
      throw new Error('the embedded database is being stopped');
    if (!this.exited) return;
    const { child } = await launch(
      this.options,
      this.socketPath ? { unix: this.socketPath } : { tcp: this.address },
    );
    if (this.stopping) {
      child.kill('SIGTERM');
      return;
    }
    this.attach(child);
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

  private attach(child: LauncherProcess): void {
    this.child = child;
    this.exited = false;
    this.lastError = undefined;
    // FerretDB's own log lines are noise here; the launcher prefixes what matters.
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (line.startsWith(LAUNCHER_PREFIX))
        this.lastError = line.slice(LAUNCHER_PREFIX.length);
    });
    this.exitPromise = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = true;
        const exit = { code, signal, lastError: this.lastError };
        resolve(exit);
        if (!this.stopping)
          this.exitListeners.forEach((listener) => listener(exit));
      });
    });
  }
}

/** Spawns the launcher and waits for its `ready <host:port>` or `ready <socket path>` line. */
async function launch(
  options: EmbeddedDatabaseOptions,
  listen: { unix: string } | { tcp: string },
): Promise<{ child: LauncherProcess; address: string }> {
  const timeoutMs = options.readyTimeoutMs ?? 15000;
  const child = spawn(
    options.binPath,
    [
      ...('unix' in listen
        ? ['--listen-unix', listen.unix]
        : ['--listen-addr', listen.tcp]),
      '--data-dir',
      join(options.dataDir, 'db'),
      '--exit-on-stdin-eof',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const stderrLines: string[] = [];
  const stderr = createInterface({ input: child.stderr }).on('line', (line) => {
    stderrLines.push(line);
    if (stderrLines.length > 20) stderrLines.shift();
  });

  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new StartupError(
          `The embedded database did not start within ${timeoutMs} ms.`,
        ),
      );
    }, timeoutMs);
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const match = /^ready (.+)$/.exec(line);
      if (match) resolve(match[1]);
      else
        reject(
          new StartupError(
            `The embedded database printed an unexpected first line: ${line}`,
          ),
        );
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new StartupError(
          `The embedded database could not be started: ${error.message}`,
        ),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Give the stderr reader a tick to collect the launcher's reason.
      setImmediate(() => {
        const reason =
          stderrLines.at(-1)?.replace(LAUNCHER_PREFIX, '') ??
          `exit code ${code}`;
        reject(
          new StartupError(`The embedded database failed to start: ${reason}`),
        );
      });
    });
  });
  stderr.close();
  return { child, address };
}

/** Fails early with a clear line when the data dir cannot be used. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
  } catch (error) {
    throw new StartupError(
      `DATA_DIR ${dataDir} is not a writable directory: ${(error as Error).message}`,
    );
  }
}
