/**
 * TEST ONLY. The steps of a restore at which the crash tests kill the server:
 * with `METATRON_TEST_RESTORE_PAUSE_AT=<step>` a restore prints
 * `restore paused at <step>` on stderr and waits there for ever, so a test can
 * send SIGKILL at a known point. Unset (always, outside tests), it does nothing.
 */
export const RESTORE_STEPS = [
  /** The journal says `staging`; half of the staging collections are written. */
  'staging',
  /** Every staging collection is written; the journal still says `staging`. */
  'staged',
  /** The journal says `committed`; nothing live has been switched yet. */
  'committed',
  /** One collection is switched, the others are not. */
  'switching',
  /** Every collection is switched; one data folder is swapped. */
  'files',
  /** Everything is switched; the previous data is being removed. */
  'cleanup',
] as const;
export type RestoreStep = (typeof RESTORE_STEPS)[number];

export const RESTORE_PAUSE_ENV = 'METATRON_TEST_RESTORE_PAUSE_AT';

export async function restorePausePoint(step: RestoreStep): Promise<void> {
  if (process.env[RESTORE_PAUSE_ENV] !== step) return;
  process.stderr.write(`restore paused at ${step}\n`);
  await new Promise<never>(() => undefined);
}
