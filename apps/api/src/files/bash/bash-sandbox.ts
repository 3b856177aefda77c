import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
} from 'node:fs';
import { constants as os } from 'node:os';
import { delimiter, join } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/app-config.provider';
import { FileDirs } from '../file-dirs';
import { formatBytes } from '../file-limits';

/** What one command inside the sandbox may use. */
export const BASH_LIMITS = {
  defaultTimeoutSeconds: 30,
  maxTimeoutSeconds: 300,
  /** stdout and stderr together; the rest is counted, not kept. */
  outputMaxBytes: 256 * 1024,
  /** A command still writing after this much output is stopped (a flood only burns CPU). */
  floodStopBytes: 16 * 1024 * 1024,
  /**
   * Processes of one command: RLIMIT_NPROC inside (the kernel exempts a host root from
   * it), and a watchdog outside that stops the command when its process tree grows past it.
   */
  maxProcesses: 128,
  processCheckMs: 50,
  /** RLIMIT_DATA per process (heap and private mappings). */
  maxDataBytes: 1024 * 1024 * 1024,
  /** Resident memory of the whole tree, summed by the watchdog: past it the command is stopped. */
  maxTotalMemoryBytes: 2 * 1024 * 1024 * 1024,
  /** RLIMIT_FSIZE: the largest file a command may write. */
  maxFileBytes: 1024 * 1024 * 1024,
  /** The private /tmp and /dev/shm live in memory: small. */
  tmpBytes: 64 * 1024 * 1024,
  shmBytes: 16 * 1024 * 1024,
} as const;

export interface BashRun {
  /** The command, aliases already expanded. */
  cmd: string;
  /** A real directory inside one of the file dirs. */
  cwd: string;
  timeoutSeconds: number;
  signal?: AbortSignal;
}

/** The bash tool's result (the seed's fields). */
export interface BashResult {
  /** Null when the command was stopped (timeout, flood, cancel). */
  exit_code: number | null;
  output: string;
  truncated: boolean;
  timed_out: boolean;
}

/** /etc entries the system tools need to run (dynamic linker, alternatives, time zone, certificates, MIME and magic data). */
const ETC_ENTRIES = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'timezone',
  'nsswitch.conf',
  'ssl',
  'ca-certificates',
  'mime.types',
  'magic',
  'magic.mime',
  'ImageMagick-6',
  'ImageMagick-7',
  'fonts',
];
const ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
const SANDBOX_PATH =
  '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';

/**
 * Runs `bash` commands inside bubblewrap: every namespace unshared (no network), the
 * system read-only, a private /tmp, /proc and /dev, the two file dirs the only
 * writable places (bound at their real paths), nothing else of DATA_DIR or the owner's
 * home, an empty environment, and limits on processes, memory and file size. Where
 * bwrap is missing or cannot build a sandbox (probed once at start), bash is not
 * offered: it never runs unsandboxed.
 */
@Injectable()
export class BashSandbox implements OnModuleInit {
  private readonly logger = new Logger('BashSandbox');
  private readonly bwrap: string | null;
  private probing: Promise<string | null> | null = null;
  /** Hardening flags this bwrap understands (older versions lack some). */
  private features = { disableUserns: false, size: false };

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'bwrapPath'>,
    private readonly dirs: FileDirs,
  ) {
    this.bwrap = config.bwrapPath ?? findOnPath('bwrap');
  }

  onModuleInit(): void {
    void this.unavailableReason().then((reason) => {
      if (reason) this.logger.warn(`The bash tool is off: ${reason}`);
    });
  }

  /** Null when commands can run; otherwise why not, in plain words. Probed once. */
  unavailableReason(): Promise<string | null> {
    this.probing ??= this.probe();
    return this.probing;
  }

  async run(run: BashRun): Promise<BashResult> {
    const reason = await this.unavailableReason();
    if (reason) throw new Error(`bash is not available: ${reason}`);
    return this.spawnSandboxed(run);
  }

  private async probe(): Promise<string | null> {
    if (!this.bwrap || !isExecutable(this.bwrap))
      return this.bwrap && this.bwrap.includes('/') && lstatOk(this.bwrap)
        ? `${this.bwrap} is not executable`
        : 'bubblewrap (bwrap) is not installed: install the package bubblewrap (Debian: apt-get install bubblewrap) to enable bash';
    const help = await this.capture([this.bwrap, '--help'], 5);
    this.features = {
      disableUserns: help.output.includes('--disable-userns'),
      size: help.output.includes('--size'),
    };
    let result = await this.spawnSandboxed({
      cmd: 'true',
      cwd: this.dirs.ensure().file_cache_dir,
      timeoutSeconds: 10,
    });
    if (result.exit_code !== 0 && this.features.disableUserns) {
      // A setuid bwrap on a machine without user namespaces for users: keep the rest of the sandbox.
      this.features.disableUserns = false;
      result = await this.spawnSandboxed({
        cmd: 'true',
        cwd: this.dirs.ensure().file_cache_dir,
        timeoutSeconds: 10,
      });
    }
    if (result.exit_code === 0) return null;
    const why = result.output.trim().split('\n')[0]?.slice(0, 200);
    return `bubblewrap cannot create a sandbox on this machine${why ? ` (${why})` : ''}: user namespaces may be disabled`;
  }

  /** bwrap's arguments: the sandbox's file system, namespaces and environment. */
  private sandboxArgs(cwd: string): string[] {
    const real = this.dirs.ensure();
    const args = [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
    ];
    if (this.features.disableUserns)
      args.push('--unshare-user', '--disable-userns');
    args.push('--ro-bind', '/usr', '/usr');
    for (const name of ROOT_LINKS) {
      const path = `/${name}`;
      const link = readLink(path);
      if (link !== null) args.push('--symlink', link, path);
      else if (lstatOk(path)) args.push('--ro-bind', path, path);
    }
    args.push('--dir', '/etc');
    for (const entry of ETC_ENTRIES)
      args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
    args.push('--proc', '/proc', '--dev', '/dev');
    args.push(...this.sized(BASH_LIMITS.shmBytes), '--tmpfs', '/dev/shm');
    args.push(...this.sized(BASH_LIMITS.tmpBytes), '--tmpfs', '/tmp');
    // After /tmp, so dirs under /tmp (tests, a DATA_DIR in /tmp) are bound over the private one.
    for (const dir of [real.file_cache_dir, real.file_state_dir])
      args.push('--bind', dir, dir);
    args.push('--remount-ro', '/dev', '--remount-ro', '/');
    args.push('--chdir', cwd, '--clearenv');
    for (const [name, value] of Object.entries({
      PATH: SANDBOX_PATH,
      HOME: '/tmp',
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      file_cache_dir: real.file_cache_dir,
      file_state_dir: real.file_state_dir,
    }))
      args.push('--setenv', name, value);
    return args;
  }

  private sized(bytes: number): string[] {
    return this.features.size ? ['--size', String(bytes)] : [];
  }

  private spawnSandboxed(run: BashRun): Promise<BashResult> {
    const limits = [
      `ulimit -H -S -u ${BASH_LIMITS.maxProcesses}`,
      `ulimit -H -S -d ${BASH_LIMITS.maxDataBytes / 1024}`,
      `ulimit -H -S -f ${BASH_LIMITS.maxFileBytes / 512}`,
      'ulimit -H -S -c 0',
    ].join(' && ');
    // The limits hold for the whole tree; `exec 2>&1` keeps stdout and stderr in one ordered stream.
    const preamble = `exec 2>&1; ${limits} || { echo 'the sandbox could not set its limits'; exit 125; }; exec /bin/bash -c "$1"`;
    return this.capture(
      [
        this.bwrap as string,
        ...this.sandboxArgs(run.cwd),
        '--',
        '/bin/bash',
        '-c',
        preamble,
        'bash',
        run.cmd,
      ],
      run.timeoutSeconds,
      run.signal,
      true,
    );
  }

  /**
   * Spawns in a process group of its own, so a timeout kills the group (bwrap, and with
   * it the sandbox's PID namespace and every process in it). Output beyond the cap is
   * counted, not kept; a flood past `floodStopBytes` stops the command.
   */
  private capture(
    argv: string[],
    timeoutSeconds: number,
    signal?: AbortSignal,
    watchProcesses = false,
  ): Promise<BashResult> {
    return new Promise((resolve) => {
      const [file, ...args] = argv;
      const child = spawn(file, args, {
        detached: true,
        env: {},
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let totalBytes = 0;
      let stopped:
        | 'timeout'
        | 'flood'
        | 'processes'
        | 'memory'
        | 'cancel'
        | null = null;
      let settled = false;

      const killGroup = (why: NonNullable<typeof stopped>) => {
        stopped ??= why;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
        // The pipes close once the namespace is gone; do not wait on them forever.
        setTimeout(() => finish(null, 'SIGKILL'), 3000).unref();
      };
      const onData = (chunk: Buffer) => {
        totalBytes += chunk.length;
        if (keptBytes < BASH_LIMITS.outputMaxBytes) {
          const part = chunk.subarray(
            0,
            BASH_LIMITS.outputMaxBytes - keptBytes,
          );
          kept.push(part);
          keptBytes += part.length;
        }
        if (totalBytes > BASH_LIMITS.floodStopBytes && !stopped)
          killGroup('flood');
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);

      const timer = setTimeout(
        () => killGroup('timeout'),
        timeoutSeconds * 1000,
      );
      // bwrap itself and the sandbox's init are in the tree too.
      const watchdog = watchProcesses
        ? setInterval(() => {
            if (!child.pid) return;
            const tree = measureTree(child.pid, BASH_LIMITS.maxProcesses + 3);
            if (tree.processes > BASH_LIMITS.maxProcesses + 2)
              killGroup('processes');
            else if (tree.residentBytes > BASH_LIMITS.maxTotalMemoryBytes)
              killGroup('memory');
          }, BASH_LIMITS.processCheckMs)
        : null;
      const onAbort = () => killGroup('cancel');
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();

      const finish = (code: number | null, sig: NodeJS.Signals | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (watchdog) clearInterval(watchdog);
        signal?.removeEventListener('abort', onAbort);
        child.stdout.destroy();
        child.stderr.destroy();
        const notes: string[] = [];
        const truncated = totalBytes > keptBytes;
        if (truncated)
          notes.push(
            `[output cut: the first ${formatBytes(BASH_LIMITS.outputMaxBytes)} of ${totalBytes}${stopped === 'flood' ? '+' : ''} bytes are shown]`,
          );
        if (stopped === 'timeout')
          notes.push(
            `[timed out after ${timeoutSeconds} s: the command and everything it started were killed]`,
          );
        else if (stopped === 'flood')
          notes.push(
            `[stopped: the command kept writing output past ${formatBytes(BASH_LIMITS.floodStopBytes)}]`,
          );
        else if (stopped === 'processes')
          notes.push(
            `[stopped: the command started more than ${BASH_LIMITS.maxProcesses} processes]`,
          );
        else if (stopped === 'memory')
          notes.push(
            `[stopped: the command's processes used more than ${formatBytes(BASH_LIMITS.maxTotalMemoryBytes)} of memory together]`,
          );
        else if (stopped === 'cancel')
          notes.push('[cancelled: the command was killed]');
        let output = new TextDecoder('utf-8').decode(Buffer.concat(kept));
        if (notes.length > 0)
          output +=
            (output === '' || output.endsWith('\n') ? '' : '\n') +
            notes.join('\n');
        resolve({
          exit_code: stopped
            ? null
            : (code ?? 128 + (sig ? (os.signals[sig] ?? 0) : 0)),
          output,
          truncated,
          timed_out: stopped === 'timeout',
        });
      };
      child.on('error', (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (watchdog) clearInterval(watchdog);
        signal?.removeEventListener('abort', onAbort);
        resolve({
          exit_code: null,
          output: `could not start ${file}: ${error.message}`,
          truncated: false,
          timed_out: false,
        });
      });
      child.on('close', finish);
    });
  }
}

/**
 * The processes in the tree under `pid` (itself included, counted up to `stopAt`) and
 * their resident memory summed (shared pages count once per process, so this errs high).
 */
function measureTree(
  pid: number,
  stopAt: number,
): { processes: number; residentBytes: number } {
  let processes = 0;
  let residentBytes = 0;
  const pending = [pid];
  while (pending.length > 0 && processes < stopAt) {
    const next = pending.pop() as number;
    processes++;
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(
        readFileSync(`/proc/${next}/status`, 'utf8'),
      );
      if (rss) residentBytes += Number(rss[1]) * 1024;
      for (const task of readdirSync(`/proc/${next}/task`))
        for (const id of readFileSync(
          `/proc/${next}/task/${task}/children`,
          'utf8',
        )
          .split(' ')
          .filter(Boolean))
          pending.push(Number(id));
    } catch {
      // Gone meanwhile.
    }
  }
  return { processes: processes + pending.length, residentBytes };
}

function findOnPath(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function lstatOk(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
