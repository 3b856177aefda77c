import { getMetadataStorage, type MetadataStorage } from 'class-validator';

type LookUp = MetadataStorage['getTargetValidationMetadatas'];
type ValidationMetadata = ReturnType<LookUp>[number];
type Grouped = ReturnType<MetadataStorage['groupByPropertyName']>;

const CACHED = Symbol.for('metatronos.validationLookupsCached');
/** Every way class-validator registers a rule or a constraint: each makes the remembered answers stale. */
const REGISTRATIONS = [
  'addValidationMetadata',
  'addConstraintMetadata',
  'addValidationSchema',
] as const;

/**
 * class-validator finds a class's rules anew on every `validate()`: it filters the class's rules and
 * tests every registered class for inheritance (`prototype instanceof`), then groups the rules by
 * property — tens of µs per request body with this app's DTOs. The answer depends only on the
 * arguments and on what is registered, and rules are registered when decorators run (module load), so
 * each answer is kept per class and options until the next registration. The arrays handed out are
 * shared: class-validator's executor only reads them (as it did its own fresh copies).
 *
 * Installed once per storage (the process-wide one by default); a second call does nothing.
 */
export function cacheValidationMetadataLookups(
  storage: MetadataStorage = getMetadataStorage(),
): void {
  const marked = storage as MetadataStorage & { [CACHED]?: true };
  if (marked[CACHED]) return;
  marked[CACHED] = true;

  const lookUp: LookUp = storage.getTargetValidationMetadatas.bind(storage);
  const groupByProperty = storage.groupByPropertyName.bind(storage);
  let answers = new Map<unknown, Map<string, ValidationMetadata[]>>();
  let groupings = new WeakMap<ValidationMetadata[], Grouped>();
  let handedOut = new WeakSet<ValidationMetadata[]>();

  for (const name of REGISTRATIONS) {
    const register = storage[name].bind(storage) as (arg: never) => void;
    Object.defineProperty(storage, name, {
      configurable: true,
      writable: true,
      value: (arg: never): void => {
        answers = new Map();
        groupings = new WeakMap();
        handedOut = new WeakSet();
        register(arg);
      },
    });
  }

  storage.getTargetValidationMetadatas = (
    targetConstructor,
    targetSchema,
    always,
    strictGroups,
    groups,
  ) => {
    const key = optionsKey(targetSchema, always, strictGroups, groups);
    let byOptions = answers.get(targetConstructor);
    const known = byOptions?.get(key);
    if (known) return known;
    const found = lookUp(
      targetConstructor,
      targetSchema,
      always,
      strictGroups,
      groups,
    );
    if (!byOptions) answers.set(targetConstructor, (byOptions = new Map()));
    byOptions.set(key, found);
    handedOut.add(found);
    return found;
  };

  // Only an array this cache handed out is known to stay as it is; any other is grouped afresh.
  storage.groupByPropertyName = (metadata) => {
    const known = groupings.get(metadata);
    if (known) return known;
    const grouped = groupByProperty(metadata);
    if (handedOut.has(metadata)) groupings.set(metadata, grouped);
    return grouped;
  };
}

/**
 * The lookup's options as one key. class-validator reads `always` and `strictGroups` only for
 * truth; the groups (JSON, so without a raw NUL) and the schema name are parted by a NUL.
 */
export function optionsKey(
  targetSchema: string | undefined,
  always: boolean,
  strictGroups: boolean,
  groups: string[] | undefined,
): string {
  const flags = (always ? 'a' : '-') + (strictGroups ? 's' : '-');
  const groupPart = groups ? JSON.stringify(groups) : '';
  return `${flags}${groupPart}\0${targetSchema ?? ''}`;
}
