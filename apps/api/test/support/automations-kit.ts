import { DateTime } from 'luxon';
import type { CronRunView } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import { AutomationTicker } from '../../src/automations/automation-ticker';
import type { DatabaseRuntime } from '../../src/database/database-runtime';
import { useModel } from './llm-test-kit';
import { createTestApp, type TestApp, type TestAppOptions } from './test-app';
import { sharedTestDatabase } from './test-database';

/** Moves the app's clock to `at` and runs the ticker once, as its timer would. */
export async function tickAt(t: TestApp, at: Date | string): Promise<void> {
  t.clock.set(new Date(at));
  await t.app.get(AutomationTicker).tick();
}

/** A database kept across app restarts in one test (dropped by `dropKeptDatabase`). */
export function keptDatabase(): DatabaseRuntime {
  return sharedTestDatabase();
}

/** Waits until `read` returns runs of which none is still running (and at least `count`). */
export async function settledRuns(
  read: () => Promise<CronRunView[]>,
  count = 1,
  timeoutMs = 15_000,
): Promise<CronRunView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await read();
    if (runs.length >= count && runs.every((run) => run.outcome !== 'running'))
      return runs;
    if (Date.now() > deadline)
      throw new Error(`runs did not settle: ${JSON.stringify(runs)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Instants in Europe/Berlin counted from the first Monday of March next year
 * (winter time, UTC+1): always in the future, so session cookies made at those
 * times are still valid for the real clock of the HTTP client.
 */
export function berlinWeek(): {
  at(day: number, time: string): string;
  mondayAt(time: string): string;
} {
  let monday = DateTime.fromObject(
    { year: DateTime.now().year + 1, month: 3, day: 1 },
    { zone: 'Europe/Berlin' },
  );
  while (monday.weekday !== 1) monday = monday.plus({ days: 1 });
  const at = (day: number, time: string): string => {
    const [hour, minute, second = '0'] = time.split(':');
    const [whole, ms = '0'] = second.split('.');
    return monday
      .plus({ days: day })
      .set({
        hour: Number(hour),
        minute: Number(minute),
        second: Number(whole),
        millisecond: Number(ms.padEnd(3, '0')),
      })
      .toUTC()
      .toISO() as string;
  };
  return { at, mondayAt: (time) => at(0, time) };
}

/** The app at `now` with the owner in Europe/Berlin and a model on the fake upstream. */
export async function bootInBerlin(
  now: string,
  options: TestAppOptions = {},
): Promise<{ t: TestApp; owner: TestAgent }> {
  const t = await createTestApp({ now: new Date(now), ...options });
  const owner = await t.owner();
  await owner
    .patch('/api/settings')
    .send({ timezone: 'Europe/Berlin' })
    .expect(200);
  await useModel(t, 'gpt-4.1-mini');
  return { t, owner };
}
