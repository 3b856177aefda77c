import { Inject, Injectable } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { AppConfig } from '../config/app-config';
import {
  FileAccessError,
  openDirBeneath,
  type ContainedDir,
} from '../files/contained-file';
import { APP_CONFIG } from '../config/app-config.provider';

/** How the owner described a stdio server. */
export interface StdioServerSpec {
  name: string;
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}

/** What to spawn: bwrap around the server, or `env -i` where bubblewrap is not usable. */
export interface StdioLaunchPlan {
  command: string;
  args: string[];
  /** bwrap and `env -i` clear it again: the server sees only the `--setenv`/`env` list. */
  env: Record<string, string>;
  cwd: string;
  sandboxed: boolean;
  /** The server's own HOME and working directory, under DATA_DIR/mcp/<name>. */
  workDir: string;
}

const FALLBACK_PATH =
  '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';

/**
 * Where and how an owner's stdio MCP server runs: a working directory of its own
 * under DATA_DIR/mcp/<name> that is also its HOME, an environment of exactly PATH,
 * HOME, TMPDIR and the owner's variables (never the app's), and, where bubblewrap
 * works, a sandbox: network allowed, the whole file system read-only except its
 * working directory and a private /tmp, DATA_DIR (keys, database, files) not there at all.
 */
@Injectable()
export class McpSandbox {
  private readonly bwrap: string | null;
  private readonly dataDir: string;
  private usable: boolean | null = null;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'bwrapPath' | 'dataDir'>,
  ) {
    this.bwrap = config.bwrapPath ?? findOnPath('bwrap', process.env['PATH']);
    this.dataDir = resolve(config.dataDir);
  }

  /** Whether servers run inside bubblewrap here (probed once). */
  sandboxAvailable(): boolean {
    if (this.usable !== null) return this.usable;
    if (!this.bwrap) return (this.usable = false);
    const probe = spawnSync(this.bwrap, [...this.baseArgs(), '--', 'true'], {
      timeout: 5000,
      stdio: 'ignore',
      env: { PATH: FALLBACK_PATH },
    });
    this.usable = probe.status === 0;
    return this.usable;
  }

  workDirOf(name: string): string {
    return join(this.dataDir, 'mcp', name);
  }

  /**
   * Removes a deleted server's folder through the link-safe opener: the server wrote
   * in it, so a link it left there is unlinked, never followed.
   */
  async removeWorkDir(name: string): Promise<void> {
    let parent: ContainedDir;
    try {
      parent = await openDirBeneath(this.dataDir, 'DATA_DIR', 'mcp');
    } catch (error) {
      if (error instanceof FileAccessError && error.reason === 'missing')
        return;
      throw error;
    }
    try {
      await parent.remove(name);
    } catch (error) {
      if (!(error instanceof FileAccessError && error.reason === 'missing'))
        throw error;
    } finally {
      await parent.close();
    }
  }

  /**
   * The spawn plan, or a plain-words reason it cannot start (a command that is not
   * there is said before anything runs).
   */
  plan(spec: StdioServerSpec): StdioLaunchPlan | { error: string } {
    const path = process.env['PATH'] || FALLBACK_PATH;
    const found = isAbsolute(spec.command)
      ? isExecutable(spec.command)
        ? spec.command
        : null
      : spec.command.includes('/')
        ? null
        : findOnPath(spec.command, path);
    if (!found)
      return {
        error: spec.command.includes('/')
          ? isAbsolute(spec.command)
            ? `the command '${spec.command}' does not exist or is not executable`
            : `the command '${spec.command}' must be a name on PATH or an absolute path`
          : `the command '${spec.command}' was not found on PATH`,
      };
    const workDir = this.workDirOf(spec.name);
    mkdirSync(workDir, { recursive: true, mode: 0o700 });
    const inside: Record<string, string> = {
      PATH: path,
      HOME: workDir,
      TMPDIR: '/tmp',
      ...spec.env,
    };
    if (this.sandboxAvailable()) {
      const args = [...this.baseArgs()];
      // DATA_DIR is not there at all; the server's own folder is bound back, writable.
      args.push('--tmpfs', realOr(this.dataDir));
      args.push('--bind', realOr(workDir), workDir);
      args.push('--chdir', workDir, '--clearenv');
      for (const [name, value] of Object.entries(inside))
        args.push('--setenv', name, value);
      args.push('--', found, ...spec.args);
      return {
        command: this.bwrap as string,
        args,
        env: { PATH: FALLBACK_PATH },
        cwd: workDir,
        sandboxed: true,
        workDir,
      };
    }
    return {
      command: findOnPath('env', FALLBACK_PATH) ?? '/usr/bin/env',
      args: [
        '-i',
        ...Object.entries(inside).map(([name, value]) => `${name}=${value}`),
        found,
        ...spec.args,
      ],
      env: { PATH: FALLBACK_PATH },
      cwd: workDir,
      sandboxed: false,
      workDir,
    };
  }

  private baseArgs(): string[] {
    return [
      '--unshare-all',
      '--share-net',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
    ];
  }
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function findOnPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? FALLBACK_PATH).split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
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
