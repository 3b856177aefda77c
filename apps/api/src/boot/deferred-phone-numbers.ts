import Module, { createRequire } from 'node:module';

type Exports = Record<PropertyKey, unknown>;

/**
 * class-validator's index loads every validator, and its `IsPhoneNumber` requires
 * `libphonenumber-js/max` at once: 73 files and the full metadata, ~100 ms of start-up CPU for a
 * validator the app never uses. This puts a stand-in for that module in the require cache that
 * loads the real one at its first use, so `isPhoneNumber` still works as before. Anything
 * unexpected (another layout of the packages) leaves the module to load as usual.
 */
export function deferPhoneNumbers(from: string): void {
  try {
    const validator = createRequire(from).resolve('class-validator');
    const requireFromValidator = createRequire(validator);
    const id = requireFromValidator.resolve('libphonenumber-js/max');
    const cache = (Module as unknown as { _cache: Record<string, NodeModule> })
      ._cache;
    if (cache[id]) return;
    let real: Exports | null = null;
    const load = (): Exports => {
      if (!real) {
        // The stand-in steps aside so that the real module is loaded and cached under its name.
        delete cache[id];
        real = requireFromValidator(id) as Exports;
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
  } catch {
    // Not laid out as expected: libphonenumber-js loads with class-validator.
  }
}
