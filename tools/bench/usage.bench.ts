// Usage figures (issue 14): a year of token usage in the `usage` rollups (every day × 3 models × 4 sources,
// as UsageRecorder writes them), then the time of GET /api/usage for the whole year and for the default
// 30 days, and of recording one reply's usage (the `$inc` upsert). The API keeps the rollups in memory
// (UsageRollups, read once after it listens): rows inserted behind its back are read in as a restored
// backup's are, and that read is timed too. Run by `npm run bench usage`.
import { getConnectionToken } from '@nestjs/mongoose';
import { DateTime } from 'luxon';
import type { Connection } from 'mongoose';
import { UsageRecorder } from '../../apps/api/src/usage/usage-recorder';
import { UsageRollups } from '../../apps/api/src/usage/usage-rollups';
import { startFakeLlmServer } from '../fake-llm/fake-llm-server';
import { startBenchApp } from './in-process-app';

const MODELS = [
  ['gpt-4.1-mini', 'openai'],
  ['gemini-2.5-flash', 'gemini'],
  ['local/llama3', 'openai-compatible'],
] as const;
const SOURCES = ['chat', 'job', 'pulse', 'auto-reply'] as const;
/** BENCH_SMOKE=1 (npm test): a month of rollups, one run, no goal. */
const SMOKE = process.env['BENCH_SMOKE'] === '1';
const RUNS = SMOKE ? 1 : 20;
const DAYS = SMOKE ? 31 : 366;
/** Issue 30: a year's report and the default 30 days, p95. */
const GOAL_MS = 50;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  const api = await startBenchApp(fake);
  try {
    const settings = await api.call<{ timezone: string }>(
      'GET',
      '/api/settings',
    );
    const today = DateTime.now().setZone(settings.timezone).startOf('day');
    const docs = [];
    for (let d = 0; d < DAYS; d++) {
      const day = today.minus({ days: d }).toISODate() as string;
      for (const [model, provider] of MODELS)
        for (const source of SOURCES)
          docs.push({
            _id: `${day}|${source}|${model}`,
            day,
            source,
            model,
            provider,
            inputTokens: 1000 + d,
            outputTokens: 100 + d,
            turns: 3,
          });
    }
    const db = api.app.get<Connection>(getConnectionToken());
    const seeded = performance.now();
    for (let i = 0; i < docs.length; i += 500)
      await db
        .collection('usage')
        .insertMany(docs.slice(i, i + 500) as never[]);
    console.log(
      `seeded ${docs.length} rollups (a year × 3 models × 4 sources) in ${Math.round(performance.now() - seeded)} ms`,
    );

    const reload = performance.now();
    await api.app.get(UsageRollups).reloadAfterRestore();
    console.log(
      `reading them into memory (after the server listens, after a restore): ${Math.round(performance.now() - reload)} ms`,
    );

    const from = today.minus({ days: 365 }).toISODate();
    const to = today.toISODate();
    for (const [label, query] of [
      ['a year (366 days)', `?from=${from}&to=${to}`],
      ['the default 30 days', ''],
    ] as const) {
      const times: number[] = [];
      let byDay = 0;
      const cpu = process.cpuUsage();
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        const report = await api.call<{ byDay: unknown[] }>(
          'GET',
          `/api/usage${query}`,
        );
        times.push(performance.now() - started);
        byDay = report.byDay.length;
      }
      const spent = process.cpuUsage(cpu);
      console.log(
        `GET /api/usage, ${label}: median ${median(times).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms over ${RUNS} runs, API CPU ${((spent.user + spent.system) / 1000 / RUNS).toFixed(1)} ms a request (${byDay} days; goal ≤ ${GOAL_MS} ms)`,
      );
      if (!SMOKE && percentile(times, 0.95) > GOAL_MS) {
        console.log(`MISS: GET /api/usage, ${label}`);
        process.exitCode = 1;
      }
    }

    const recorder = api.app.get(UsageRecorder);
    const times: number[] = [];
    for (let i = 0; i < (SMOKE ? 5 : 50); i++) {
      const started = performance.now();
      await recorder.record({
        source: 'chat',
        model: 'gpt-4.1-mini',
        provider: 'openai',
        usage: { inputTokens: 1200, outputTokens: 80 },
      });
      times.push(performance.now() - started);
    }
    console.log(
      `recording one reply's usage ($inc upsert on _id): median ${median(times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms over 50`,
    );
  } finally {
    await api.close();
    await fake.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
