import type { UsageReport, UsageTokens } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { AppEventBus } from '../src/events/app-event-bus';
import { UsageRecorder, type UsageEntry } from '../src/usage/usage-recorder';
import { UsageRollups } from '../src/usage/usage-rollups';
import { createTestApp, type TestApp } from './support/test-app';

const DAY_MS = 86_400_000;
// 22:30 UTC today (the session cookie's expiry is checked against the real time): a day apart in
// Auckland and Los Angeles.
const START = new Date(
  Math.floor(Date.now() / DAY_MS) * DAY_MS + 22.5 * 3_600_000,
);
const dayAt = (days: number) =>
  new Date(START.getTime() + days * DAY_MS).toISOString().slice(0, 10);
const FROM = dayAt(-10);
const TO = dayAt(5);

interface StoredRollup extends UsageTokens {
  _id: string;
  day: string;
  source: string;
  model: string;
}

/**
 * `GET /api/usage` answers from the rollups' copy in memory (UsageRollups): after writes of every kind,
 * across days and time zones, during a reload and behind its back, it must say what the database says.
 */
describe('Usage rollups in memory', () => {
  let t: TestApp;
  let owner: TestAgent;
  let recorder: UsageRecorder;

  beforeAll(async () => {
    t = await createTestApp({ now: START });
    owner = await t.owner();
    recorder = t.app.get(UsageRecorder);
  });
  afterAll(() => t.close());

  const usage = async (query: string): Promise<UsageReport> =>
    (await owner.get(`/api/usage${query}`).expect(200)).body;
  const stored = async (): Promise<StoredRollup[]> =>
    (await t.app
      .get<Connection>(getConnectionToken())
      .collection('usage')
      .find()
      .toArray()) as unknown as StoredRollup[];

  /** The report's figures added up again from the database's rollups, independently of the service. */
  async function expectSameAsDatabase(from: string, to: string): Promise<void> {
    const report = await usage(`?from=${from}&to=${to}`);
    const rows = (await stored()).filter((r) => r.day >= from && r.day <= to);
    const sum = (pick: (r: StoredRollup) => boolean) => {
      const of = rows.filter(pick);
      return {
        inputTokens: of.reduce((n, r) => n + r.inputTokens, 0),
        outputTokens: of.reduce((n, r) => n + r.outputTokens, 0),
        turns: of.reduce((n, r) => n + r.turns, 0),
        costUsd: of.reduce((n, r) => n + r.costUsd, 0),
      };
    };
    const near = <T extends UsageTokens>(tokens: T) => ({
      ...tokens,
      costUsd: expect.closeTo(tokens.costUsd, 6),
    });
    expect(report.totals).toEqual(near(sum(() => true)));
    for (const day of report.byDay)
      expect(day).toEqual(
        near({ day: day.day, ...sum((r) => r.day === day.day) }),
      );
    expect(report.byModel.map((m) => m.model).sort()).toEqual(
      [...new Set(rows.map((r) => r.model))].sort(),
    );
    for (const model of report.byModel)
      expect(model).toMatchObject(near(sum((r) => r.model === model.model)));
    expect(report.bySource.map((s) => s.source).sort()).toEqual(
      [...new Set(rows.map((r) => r.source))].sort(),
    );
    for (const source of report.bySource)
      expect(source).toMatchObject(
        near(sum((r) => r.source === source.source)),
      );
  }

  const entries: UsageEntry[] = [
    {
      source: 'chat',
      model: 'gpt-4.1-mini',
      provider: 'openai',
      usage: { inputTokens: 1200, outputTokens: 80 },
    },
    {
      source: 'cron',
      model: 'gemini-2.5-flash',
      provider: 'gemini',
      usage: { inputTokens: 300, outputTokens: 40 },
    },
    {
      source: 'auto-reply',
      model: 'local/llama3',
      provider: 'openai-compatible',
      usage: { inputTokens: 70, outputTokens: 9 },
    },
    // A reservation a crash left, charged at its worst case: cost, no turn.
    {
      source: 'pulse',
      model: 'gpt-4.1-mini',
      provider: 'openai',
      usage: undefined,
      costUsd: 0.0123,
    },
  ];

  it('answers what the database holds after mixed writes across days and time zones', async () => {
    let written = 0;
    for (const [zone, hours] of [
      ['Europe/Berlin', 0],
      ['Pacific/Auckland', 5],
      ['America/Los_Angeles', 7],
      ['UTC', 30],
    ] as const) {
      await owner.patch('/api/settings').send({ timezone: zone }).expect(200);
      t.clock.set(new Date(START.getTime() + hours * 3_600_000));
      // Many at once, of the same rollups and of others, and some for a given day.
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          recorder.record(
            entries[i % entries.length],
            i % 6 === 5 ? { day: dayAt(-(i % 7)) } : undefined,
          ),
        ),
      );
      written += 24;
    }
    await owner.patch('/api/settings').send({ timezone: 'UTC' }).expect(200);
    expect(written).toBe(96);
    // Days on both sides of the clock change and of the date line were written.
    expect(new Set((await stored()).map((r) => r.day)).size).toBeGreaterThan(3);
    await expectSameAsDatabase(FROM, TO);
    await expectSameAsDatabase(dayAt(1), dayAt(1));
    // Read again from the database (as after a restore): the same report.
    const before = await usage(`?from=${FROM}&to=${TO}`);
    await t.app.get(AppEventBus).emitAndWait('backup.restored', {
      at: new Date().toISOString(),
    });
    expect(await usage(`?from=${FROM}&to=${TO}`)).toEqual(before);
  });

  it('loses and doubles nothing written while the copy is read again', async () => {
    const rollups = t.app.get(UsageRollups);
    const writes = Array.from({ length: 30 }, (_, i) =>
      recorder.record(entries[i % entries.length]),
    );
    // Reloads start between the writes: each waits for those under way and holds the next back.
    const reloads = [
      rollups.reloadAfterRestore(),
      new Promise((done) => setTimeout(done, 5)).then(() =>
        rollups.reloadAfterRestore(),
      ),
    ];
    writes.push(
      ...Array.from({ length: 30 }, (_, i) =>
        recorder.record(entries[(i + 1) % entries.length]),
      ),
    );
    await Promise.all([...writes, ...reloads]);
    await expectSameAsDatabase(FROM, TO);
  });

  it('reads a restored backup’s rollups (written behind its back)', async () => {
    const day = dayAt(3);
    const report = async () =>
      (await usage(`?from=${day}&to=${day}`)).totals.inputTokens;
    expect(await report()).toBe(0);
    await t.app
      .get<Connection>(getConnectionToken())
      .collection<StoredRollup>('usage')
      .insertOne({
        _id: `${day}|chat|gpt-4.1-mini`,
        day,
        source: 'chat',
        model: 'gpt-4.1-mini',
        inputTokens: 5000,
        outputTokens: 10,
        turns: 2,
        costUsd: 0.01,
      });
    // The copy is the process's own: until a restore says so, it does not look.
    expect(await report()).toBe(0);
    await t.app.get(AppEventBus).emitAndWait('backup.restored', {
      at: new Date().toISOString(),
    });
    expect(await report()).toBe(5000);
    await expectSameAsDatabase(FROM, TO);
  });
});
