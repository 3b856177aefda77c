import { Inject, Injectable } from '@nestjs/common';
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  dirname,
  isAbsolute,
  join,
  posix,
  relative,
  resolve,
  sep,
} from 'node:path';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import {
  openDirBeneath,
  openFileBeneath,
  openParentBeneath,
  replaceFileBeneath,
  type ContainedDir,
  type OpenPurpose,
} from './contained-file';

/** The two file dirs the toolbelt may use, as the model names them. */
export const FILE_DIR_ALIASES = ['file_cache_dir', 'file_state_dir'] as const;
export type FileDirAlias = (typeof FILE_DIR_ALIASES)[number];

/** A path the toolbelt resolved inside one of its dirs. */
export interface ResolvedFilePath {
  ok: true;
  /** The absolute path as named (for bash and messages; never opened by name). */
  absolute: string;
  alias: FileDirAlias;
  /** The path below the dir as named (no link followed), `/`-separated; `''` for the dir itself. */
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

  /** Opens a resolved file link-safe (see contained-file.ts); use only the handle afterwards. */
  open(
    file: ResolvedFilePath,
    purpose: OpenPurpose,
    options: { createParents?: boolean } = {},
  ): Promise<FileHandle> {
    return openFileBeneath(
      this.ensure()[file.alias],
      file.alias,
      file.relative,
      purpose,
      options,
    );
  }

  /** Opens a resolved directory link-safe (`create`: make the missing folders). */
  openDir(
    dir: ResolvedFilePath,
    options: { create?: boolean } = {},
  ): Promise<ContainedDir> {
    return openDirBeneath(
      this.ensure()[dir.alias],
      dir.alias,
      dir.relative,
      options,
    );
  }

  /** Opens the folder that holds a resolved path, for a create, rename or delete inside it. */
  openParent(
    file: ResolvedFilePath,
    options: { createParents?: boolean } = {},
  ): Promise<{ dir: ContainedDir; name: string }> {
    return openParentBeneath(
      this.ensure()[file.alias],
      file.alias,
      file.relative,
      options,
    );
  }

  /** Writes a whole file atomically inside its opened parent (temp file + rename there). */
  replace(
    file: ResolvedFilePath,
    write: (handle: FileHandle) => Promise<void>,
    options: { createParents?: boolean } = {},
  ): Promise<void> {
    return replaceFileBeneath(
      this.ensure()[file.alias],
      file.alias,
      file.relative,
      write,
      options,
    );
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
    const leaves = () => ({
      ok: false as const,
      error: `Path '${path}' leaves ${alias} (.. and symlinks may not point outside it)`,
    });
    let below: string;
    if (!alias && isAbsolute(path)) {
      const target = resolve(path);
      alias = FILE_DIR_ALIASES.find(
        (a) => isInside(target, real[a]) || isInside(target, this.dirs[a]),
      );
      if (!alias)
        return {
          ok: false,
          error: `Path '${path}' is outside file_cache_dir and file_state_dir`,
        };
      const base = isInside(target, real[alias])
        ? real[alias]
        : this.dirs[alias];
      below = relative(base, target).split(sep).join('/');
    } else {
      alias ??= options.defaultAlias ?? 'file_cache_dir';
      // `..` is taken by name (never through a link): one that climbs above the dir leaves it.
      const normal = posix.normalize(rest === '' ? '.' : rest);
      if (normal === '..' || normal.startsWith('../')) return leaves();
      below = normal === '.' ? '' : normal.replace(/\/+$/, '');
    }
    const absolute = below === '' ? real[alias] : join(real[alias], below);
    // Early, clear words for a link that leads out; the walk in contained-file.ts is what enforces it.
    if (!isInside(realOfExisting(absolute), real[alias])) return leaves();
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
