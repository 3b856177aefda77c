import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';
import { crc32 } from 'node:zlib';
import { SystemClock } from '../clock/clock';
import { atQuietMoment } from './quiet-moment';

/**
 * Node 20 has no `module.enableCompileCache`, and loading ~2,100 CommonJS files was ~70 % of the
 * start-up CPU: resolving each `require` (stats, package.json reads), reading its package scope and
 * compiling it. This keeps, per build and Node version, one file holding what the last start
 * learned: where each `require` resolved to and the V8 code of every module (made after the start,
 * so it holds the functions the start ran, not only the top level).
 *
 * V8 trusts code it is given, so the cache lives only in a directory of this OS user that no one
 * else can write, and a file is used only if it belongs to this user and is not writable by others.
 * A module's code is used only if its source is unchanged (length and CRC-32); a resolution only
 * while the installed packages are unchanged (`node_modules/.package-lock.json`) and its file
 * exists. Anything unexpected means no cache, never a failed start.
 */

interface NodeModuleInternals {
  _resolveFilename(
    this: unknown,
    request: string,
    parent: NodeModule | undefined,
    isMain: boolean,
    options?: unknown,
  ): string;
  _resolveLookupPaths(request: string, parent: NodeModule): string[] | null;
  _extensions: Record<
    string,
    (this: unknown, module: NodeModule, filename: string) => void
  >;
  _cache: Record<string, NodeModule>;
  wrap(source: string): string;
  builtinModules: readonly string[];
  prototype: {
    _compile(
      this: NodeModule,
      content: string,
      filename: string,
      format?: string,
    ): unknown;
  };
}

interface CacheIndex {
  /** The installed packages this file's resolutions hold for. */
  packages: string;
  resolved: Record<string, string>;
  /** filename → [source key, start, end] in the code section. */
  code: Record<string, [string, number, number]>;
}

const FILE_MAGIC = 'metatronos-compile-cache-1';
const CACHE_FILE_NAME = /^[0-9a-f]{24}\.cache$/;
/** Cache files kept in the directory (this one included). */
const KEEP_FILES = 4;
/** A file used again after this long has its time updated, so that pruning keeps it. */
const TOUCH_AFTER_MS = 24 * 3600_000;

/** Where the launcher leaves the installed cache for the server it loads. */
export const COMPILE_CACHE_GLOBAL = Symbol.for('metatronos.compileCache');

export interface CompileCache {
  /** Writes what this start learned, if anything is new (at most once; also done at exit). */
  save(): void;
  readonly stats: { hits: number; compiled: number; rejected: number };
}

/** `COMPILE_CACHE_DIR`: a directory, `off`, or unset (the user's cache directory). */
export function compileCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const chosen = env['COMPILE_CACHE_DIR']?.trim();
  if (chosen === 'off' || chosen === '0' || chosen === 'false')
    return undefined;
  if (chosen) return chosen;
  const base = env['XDG_CACHE_HOME']?.trim() || join(homedir(), '.cache');
  return join(base, 'metatronos', 'compile-cache');
}

/** A directory of ours that no other user can write, made if missing; otherwise undefined. */
function privateDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid))
      return undefined;
    if (stat.mode & 0o022) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * The cache file, opened if it is this user's and no one else can write it. Only its index is
 * read here; each module's code is read from the descriptor when that module loads, so that no
 * ~8 MB buffer stays in memory until a major GC collects it.
 */
class CacheFile {
  private constructor(
    private fd: number | undefined,
    readonly index: CacheIndex,
    private readonly codeStart: number,
  ) {}

  static open(path: string): CacheFile | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'r');
      const stat = fstatSync(fd);
      const uid = process.getuid?.();
      if (
        !stat.isFile() ||
        (uid !== undefined && stat.uid !== uid) ||
        stat.mode & 0o022
      )
        throw new Error('not a private file');
      const head = Buffer.alloc(FILE_MAGIC.length + 4);
      if (readSync(fd, head, 0, head.length, 0) !== head.length)
        throw new Error('short');
      if (head.subarray(0, FILE_MAGIC.length).toString() !== FILE_MAGIC)
        throw new Error('not a cache');
      const headerLength = head.readUInt32LE(FILE_MAGIC.length);
      const header = Buffer.alloc(headerLength);
      if (readSync(fd, header, 0, headerLength, head.length) !== headerLength)
        throw new Error('short');
      const index = JSON.parse(header.toString()) as CacheIndex;
      // Pruning (see `prune`) keeps the files last used, so a file in use is marked as such.
      const now = new SystemClock().now();
      if (now.getTime() - stat.mtimeMs > TOUCH_AFTER_MS)
        futimesSync(fd, now, now);
      return new CacheFile(fd, index, head.length + headerLength);
    } catch {
      if (fd !== undefined) closeSync(fd);
      return undefined;
    }
  }

  /** The bytes of [start, end) of the code section, or undefined if they cannot be read. */
  code(start: number, end: number): Buffer | undefined {
    if (this.fd === undefined || end <= start) return undefined;
    try {
      const data = Buffer.allocUnsafeSlow(end - start);
      const read = readSync(
        this.fd,
        data,
        0,
        data.length,
        this.codeStart + start,
      );
      return read === data.length ? data : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Every build (and Node version, flag set) writes its own file: only the most recently used
 * `KEEP_FILES` stay, so that rebuilds and upgrades do not fill the disk.
 */
function prune(dir: string, keep: string): void {
  try {
    const files = readdirSync(dir)
      .filter((name) => CACHE_FILE_NAME.test(name) && name !== keep)
      .map((name) => ({
        path: join(dir, name),
        mtimeMs: statSync(join(dir, name)).mtimeMs,
      }))
      .sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const { path } of files.slice(KEEP_FILES - 1))
      rmSync(path, { force: true });
  } catch {
    // Left for the next write.
  }
}

/** Identifies the installed packages: npm rewrites this file on every install. */
function packagesKey(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const lock = join(dir, 'node_modules', '.package-lock.json');
    const stat = statSync(lock, { throwIfNoEntry: false });
    if (stat) return `${lock}:${stat.size}:${stat.mtimeMs}`;
    if (dirname(dir) === dir) return 'none';
  }
}

/** What Node's own `_compile` does after compiling: the module's `require` and the call. */
function runModule(
  loader: NodeModuleInternals,
  module: NodeModule,
  wrapper: (...args: unknown[]) => unknown,
  filename: string,
): unknown {
  const require = ((id: string) => module.require(id)) as NodeJS.Require;
  require.resolve = Object.assign(
    (request: string, options?: { paths?: string[] }) =>
      loader._resolveFilename(request, module, false, options),
    { paths: (request: string) => loader._resolveLookupPaths(request, module) },
  );
  require.main = process.mainModule;
  require.extensions = loader._extensions as NodeJS.Require['extensions'];
  require.cache = loader._cache;
  return wrapper.call(
    module.exports,
    module.exports,
    require,
    module,
    filename,
    dirname(filename),
  );
}

const sourceKey = (content: string): string =>
  `${content.length}:${crc32(content)}`;

/**
 * Installs the cache for every CommonJS module loaded from now on. `entry` is the file whose
 * build the cache belongs to (the server bundle): its size and time, Node's version and the
 * flags name the cache file, so another build or flag set never reads it.
 */
export function installCompileCache(
  dir: string | undefined,
  entry: string,
): CompileCache | undefined {
  const home = dir && privateDir(dir);
  if (!home) return undefined;
  const loader = Module as unknown as NodeModuleInternals;
  let entryStat;
  try {
    entryStat = statSync(entry);
  } catch {
    return undefined;
  }
  const name = createHash('sha256')
    .update(
      JSON.stringify([
        entry,
        entryStat.size,
        entryStat.mtimeMs,
        process.version,
        process.versions.v8,
        process.arch,
        process.execArgv,
      ]),
    )
    .digest('hex')
    .slice(0, 24);
  const file = join(home, `${name}.cache`);
  const packages = packagesKey(dirname(entry));

  let index: CacheIndex = { packages, resolved: {}, code: {} };
  let samePackages = false;
  const cacheFile = CacheFile.open(file);
  if (cacheFile) {
    samePackages = cacheFile.index.packages === packages;
    index = {
      packages,
      resolved: samePackages ? cacheFile.index.resolved : {},
      code: cacheFile.index.code,
    };
  }

  const stats = { hits: 0, compiled: 0, rejected: 0 };
  const scripts = new Map<string, { key: string; script: Script }>();
  let learned: Record<string, string> = {};
  let dirty = false;

  const originalResolve = loader._resolveFilename;
  const resolveHook: NodeModuleInternals['_resolveFilename'] = function (
    request,
    parent,
    isMain,
    options,
  ) {
    const from = parent?.filename;
    if (!from || isMain || options || request.startsWith('node:'))
      return originalResolve.call(this, request, parent, isMain, options);
    const key = `${dirname(from)}\0${request}`;
    const known = index.resolved[key];
    if (
      known &&
      (loader._cache[known] ||
        statSync(known, { throwIfNoEntry: false })?.isFile())
    ) {
      learned[key] = known;
      return known;
    }
    const found = originalResolve.call(this, request, parent, isMain, options);
    // Built-in modules resolve to their bare name; only files are remembered.
    if (found.startsWith('/')) {
      learned[key] = found;
      dirty = true;
    }
    return found;
  };

  const originalJs = loader._extensions['.js'];
  const jsHook: NodeModuleInternals['_extensions'][string] = function (
    module,
    filename,
  ) {
    // A file compiled as CommonJS last time (same packages) skips the package-scope lookup.
    if (samePackages && index.code[filename]) {
      (
        module as unknown as { _compile(c: string, f: string): unknown }
      )._compile(readFileSync(filename, 'utf8'), filename);
      return;
    }
    originalJs.call(this, module, filename);
  };

  const originalCompile = loader.prototype._compile;
  const compileHook: NodeModuleInternals['prototype']['_compile'] = function (
    content,
    filename,
    format,
  ) {
    if ((format && format !== 'commonjs') || !/\.c?js$/.test(filename))
      return originalCompile.call(this, content, filename, format);
    const key = sourceKey(content);
    const stored = index.code[filename];
    const cachedData =
      stored && stored[0] === key
        ? cacheFile?.code(stored[1], stored[2])
        : undefined;
    let script: Script;
    try {
      script = new Script(loader.wrap(content), {
        filename,
        cachedData,
        importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
      });
    } catch {
      // ES module syntax and the like: Node's own loader knows what to do.
      return originalCompile.call(this, content, filename, format);
    }
    if (!cachedData) stats.compiled++;
    else if (script.cachedDataRejected) stats.rejected++;
    else stats.hits++;
    if (!cachedData || script.cachedDataRejected) dirty = true;
    scripts.set(filename, { key, script });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (
      ...args: unknown[]
    ) => unknown;
    return runModule(loader, this, wrapper, filename);
  };

  loader._resolveFilename = resolveHook;
  loader._extensions['.js'] = jsHook;
  loader.prototype._compile = compileHook;

  let saved = false;
  const save = (): void => {
    if (saved) return;
    saved = true;
    process.off('exit', save);
    try {
      if (dirty) write();
    } finally {
      finish();
    }
  };
  const write = (): void => {
    try {
      const entries: CacheIndex['code'] = {};
      const parts: Buffer[] = [];
      let offset = 0;
      for (const [filename, { key, script }] of scripts) {
        const data = script.createCachedData();
        entries[filename] = [key, offset, offset + data.length];
        offset += data.length;
        parts.push(data);
      }
      const header = Buffer.from(
        JSON.stringify({
          packages,
          resolved: learned,
          code: entries,
        } satisfies CacheIndex),
      );
      const length = Buffer.alloc(4);
      length.writeUInt32LE(header.length);
      // Another start may write at the same moment: each writes its own file and renames it.
      const temporary = `${file}.${process.pid}`;
      writeFileSync(
        temporary,
        Buffer.concat([Buffer.from(FILE_MAGIC), length, header, ...parts]),
        {
          mode: 0o600,
        },
      );
      renameSync(temporary, file);
      prune(home, `${name}.cache`);
    } catch {
      // A cache that cannot be written only means the next start compiles again.
    }
  };
  // The cache is for the start only: later modules (SDKs loaded at first use) load as usual,
  // and neither the hooks nor the index stay in memory.
  const finish = (): void => {
    if (loader._resolveFilename === resolveHook)
      loader._resolveFilename = originalResolve;
    if (loader._extensions['.js'] === jsHook)
      loader._extensions['.js'] = originalJs;
    if (loader.prototype._compile === compileHook)
      loader.prototype._compile = originalCompile;
    scripts.clear();
    learned = {};
    index = { packages, resolved: {}, code: {} };
    cacheFile?.close();
  };
  process.once('exit', save);
  return { save, stats };
}

/**
 * Called once the server listens: writes the cache soon after (only when this start compiled
 * something new), so it holds what a start runs rather than what later requests need. Making the
 * code of every module is ~100 ms of the main thread, so the save waits for a quiet moment
 * (`atQuietMoment`) instead of stalling the first requests' replies. Returns what this start took
 * from the cache (undefined: no cache).
 */
export function saveCompileCacheSoon(
  delayMs = 1000,
): CompileCache['stats'] | undefined {
  const cache = (globalThis as { [COMPILE_CACHE_GLOBAL]?: CompileCache })[
    COMPILE_CACHE_GLOBAL
  ];
  if (!cache) return undefined;
  atQuietMoment(() => cache.save(), delayMs);
  return { ...cache.stats };
}
