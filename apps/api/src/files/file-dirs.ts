import { Inject, Injectable } from '@nestjs/common';
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';

/** The two file dirs the toolbelt may use, as the model names them. */
export const FILE_DIR_ALIASES = ['file_cache_dir', 'file_state_dir'] as const;
export type FileDirAlias = (typeof FILE_DIR_ALIASES)[number];

/** A path the toolbelt resolved inside one of its dirs. */
export interface ResolvedFilePath {
  ok: true;
  /** The real absolute path (symlinks of existing parents resolved). */
  absolute: string;
  alias: FileDirAlias;
  /** The path below the dir, `/`-separated; `''` for the dir itself. */
  relative: string;
  /** How the model and the console write it: `file_cache_dir/notes/a.md`. */
  display: string;
}

export type FilePathResult = ResolvedFilePath | { ok: false; error: string };

/**
 * `<DATA_DIR>/files/cache` and `<DATA_DIR>/files/state`: the only places the file
 * tools, the bash sandbox and downloads may touch. Every path the model gives goes
 * through `resolve()`, which refuses anything that leaves the two dirs after `..`
 * and symlinks are resolved.
 */
@Injectable()
export class FileDirs {
  readonly root: string;
  private readonly dirs: Record<FileDirAlias, string>;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'dataDir'>) {
    this.root = join(resolve(config.dataDir), 'files');
    this.dirs = {
      file_cache_dir: join(this.root, 'cache'),
      file_state_dir: join(this.root, 'state'),
    };
  }

  get cacheDir(): string {
    return this.dirs.file_cache_dir;
  }

  get stateDir(): string {
    return this.dirs.file_state_dir;
  }

  dirOf(alias: FileDirAlias): string {
    return this.dirs[alias];
  }

  /** Creates both dirs (owner-only) if they are missing; returns their real paths. */
  ensure(): Record<FileDirAlias, string> {
    for (const dir of Object.values(this.dirs))
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    return {
      file_cache_dir: realpathSync(this.dirs.file_cache_dir),
      file_state_dir: realpathSync(this.dirs.file_state_dir),
    };
  }

  /** Replaces `file_cache_dir/…` and `file_state_dir/…` at word starts with real paths (for bash). */
  expandAliases(text: string): string {
    const real = this.ensure();
    return text.replace(
      /(^|[\s"'=:(])(file_cache_dir|file_state_dir)(?=\/|$|[\s"';)])/g,
      (_m, before: string, alias: FileDirAlias) => before + real[alias],
    );
  }

  /**
   * Resolves a path the model gave: `file_cache_dir/<path>`, `file_state_dir/<path>`,
   * a relative path (under `defaultAlias`), or an absolute path inside one of the dirs.
   * `allowDir` lets the bare alias (the dir itself) through, for listings and `cwd`.
   */
  resolve(
    input: string,
    options: { defaultAlias?: FileDirAlias; allowDir?: boolean } = {},
  ): FilePathResult {
    const path = input.trim();
    if (path === '') return { ok: false, error: 'path is required' };
    if (path.includes('\0'))
      return { ok: false, error: 'path must not contain NUL characters' };
    const real = this.ensure();
    let alias: FileDirAlias | undefined;
    let rest = path;
    for (const candidate of FILE_DIR_ALIASES) {
      if (path === candidate || path.startsWith(`${candidate}/`)) {
        alias = candidate;
        rest = path.slice(candidate.length).replace(/^\/+/, '');
      }
    }
    let target: string;
    if (alias) target = join(real[alias], rest);
    else if (isAbsolute(path)) {
      target = resolve(path);
      alias = FILE_DIR_ALIASES.find((a) =>
        isInside(realOfExisting(target), real[a]),
      );
      if (!alias)
        return {
          ok: false,
          error: `Path '${path}' is outside file_cache_dir and file_state_dir`,
        };
    } else {
      alias = options.defaultAlias ?? 'file_cache_dir';
      target = join(real[alias], path);
    }
    const absolute = realOfExisting(resolve(target));
    if (!isInside(absolute, real[alias]))
      return {
        ok: false,
        error: `Path '${path}' leaves ${alias} (.. and symlinks may not point outside it)`,
      };
    const below = relative(real[alias], absolute).split(sep).join('/');
    if (below === '' && !options.allowDir)
      return {
        ok: false,
        error: `Path '${path}' names the directory ${alias} itself: add a file name, like ${alias}/notes.md`,
      };
    return {
      ok: true,
      absolute,
      alias,
      relative: below,
      display: below === '' ? alias : `${alias}/${below}`,
    };
  }
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

/** The real path of `path`: symlinks of the part that exists resolved, the rest appended. */
function realOfExisting(path: string): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch {
      // A link that points nowhere would be followed on write: treat it as outside.
      if (isDanglingLink(current)) return '\0dangling-link';
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(current.slice(parent.length).replace(/^[/\\]+/, ''));
      current = parent;
    }
  }
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
