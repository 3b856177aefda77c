import type IcalJs from 'ical.js';

/**
 * ical.js, loaded at its first use rather than when the server starts: only calendar accounts use
 * it, and loading it costs ~1 MB of heap (~2.4 MiB of idle RSS) on every server. Written and read
 * as the package's default export (`ICAL.Time.fromDateTimeString(…)`, `new ICAL.Component(…)`,
 * `ICAL.Component` as a type); the property is looked up on the real module each time.
 */
type Ical = typeof IcalJs;

let loaded: Ical | null = null;

function load(): Ical {
  // The package's CommonJS build exports the members themselves (no `default`, no `__esModule`).
  loaded ??= require('ical.js') as Ical;
  return loaded;
}

export const ICAL: Ical = new Proxy({} as Ical, {
  get: (_target, key) => Reflect.get(load(), key),
});

// The package's types under the same name, so `ICAL.Component` still names the class's instances.
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace ICAL {
  export type Component = IcalJs.Component;
  export type Event = IcalJs.Event;
  export type Property = IcalJs.Property;
  export type Recur = IcalJs.Recur;
  export type Time = IcalJs.Time;
  export type Timezone = IcalJs.Timezone;
  export type UtcOffset = IcalJs.UtcOffset;
}

/** Whether ical.js is loaded yet. */
export function icalLoaded(): boolean {
  return loaded !== null;
}
