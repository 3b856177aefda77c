import Module, { createRequire } from 'node:module';

type Exports = Record<PropertyKey, unknown>;

/**
 * Modules a dependency requires when it loads but the app uses late or never, each loaded at its
 * first use instead (start-up CPU and idle memory):
 * - class-validator's index loads every validator, and its `IsPhoneNumber` requires
 *   `libphonenumber-js/max` at once: 73 files and the full metadata, ~100 ms of start-up CPU for a
 *   validator the app never uses;
 * - the MongoDB driver requires `@mongodb-js/saslprep` (SCRAM-SHA-256 passwords) when it loads: its
 *   code-point tables are ~2 MB of heap, used only when a `MONGODB_URI` with a password connects.
 */
export const DEFERRED_MODULES: ReadonlyArray<
  [via: readonly string[], request: string]
> = [
  [['class-validator'], 'libphonenumber-js/max'],
  [['mongodb'], '@mongodb-js/saslprep'],
];

/** Defers each of `DEFERRED_MODULES` as seen from `from` (the server bundle). */
export function deferModules(from: string): void {
  for (const [via, request] of DEFERRED_MODULES)
    deferModule(from, via, request);
}

/**
 * Puts a stand-in for `request`, as the last package of `via` (each resolved from the one before,
 * the first from `from`) requires it, in the require cache; the stand-in loads the real module at
 * its first use, so it works as before. True when the stand-in is in place; anything unexpected
 * (another layout of the packages, the module already loaded) leaves the module to load as usual.
 */
export function deferModule(
  from: string,
  via: readonly string[],
  request: string,
): boolean {
  try {
    let requireFrom = createRequire(from);
    for (const name of via)
      requireFrom = createRequire(requireFrom.resolve(name));
    const id = requireFrom.resolve(request);
    const cache = (Module as unknown as { _cache: Record<string, NodeModule> })
      ._cache;
    if (cache[id]) return false;
    let real: Exports | null = null;
    const load = (): Exports => {
      if (!real) {
        // The stand-in steps aside so that the real module is loaded and cached under its name.
        delete cache[id];
        real = requireFrom(id) as Exports;
      }
      return real;
    };
    const standIn = new Module(id) as NodeModule;
    standIn.filename = id;
    standIn.loaded = true;
    standIn.exports = new Proxy<Exports>(
      {},
      {
        get: (_target, key) => load()[key],
        has: (_target, key) => key in load(),
        ownKeys: () => Reflect.ownKeys(load()),
        getOwnPropertyDescriptor: (_target, key) => {
          const descriptor = Object.getOwnPropertyDescriptor(load(), key);
          return descriptor && { ...descriptor, configurable: true };
        },
      },
    );
    cache[id] = standIn;
    return true;
  } catch {
    return false;
  }
}
