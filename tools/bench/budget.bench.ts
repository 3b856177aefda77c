// Spend control (issue 25): what the budget's check adds to a model call. The real app's BudgetService
// wraps an adapter that makes no network call, so every microsecond measured is the guard's own: the
// prompt estimate, the ledger's reservation, the durable record's insert being started, the settlement.
// The prompt is a realistic one (20 KB system prompt, 30 history messages, 40 tool specs, a tool round).
// Goal: ≤ 1 ms p95 per model call; exits non-zero on a miss. Run by `npm run bench budget`.
import { BudgetService } from '../../apps/api/src/budget/budget.service';
import type {
  LlmAdapter,
  LlmHistoryMessage,
  LlmToolSpec,
  LlmTurnRequest,
} from '../../apps/api/src/llm/llm-adapter';
import { startFakeLlmServer } from '../fake-llm/fake-llm-server';
import { startBenchApp } from './in-process-app';

/** BENCH_SMOKE=1 (npm test): a few calls, no goal. */
const SMOKE = process.env['BENCH_SMOKE'] === '1';
const CALLS = SMOKE ? 100 : 2_000;
const CONCURRENT = 20;
const GOAL_P95_MS = 1;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Per call: the time from the turn's start until the request would go out, and the settlement's. */
const onCallPath: number[] = [];
const cleanup: number[] = [];
let turnStarted = 0;
let callEnded = 0;

/** One model call per turn: the adapter asks the guard, "streams" a word and reports usage. */
const bare: LlmAdapter = {
  async streamTurn(_request, sink) {
    await sink.beforeCall?.();
    const sent = performance.now();
    sink.onText('ok');
    const settling = performance.now();
    sink.onUsage?.({ inputTokens: 6_000, outputTokens: 40 });
    callEnded = performance.now();
    onCallPath.push(sent - turnStarted + (callEnded - settling));
    return { usage: { inputTokens: 6_000, outputTokens: 40 } };
  },
};

function request(): LlmTurnRequest {
  const history: LlmHistoryMessage[] = [];
  for (let i = 0; i < 15; i++) {
    history.push({ role: 'user', text: `question ${i} `.repeat(40) });
    history.push({
      role: 'assistant',
      parts: [{ type: 'text', text: `answer ${i} `.repeat(80) }],
    });
  }
  const tools: LlmToolSpec[] = Array.from({ length: 40 }, (_, i) => ({
    name: `tool_${i}`,
    description: 'Does a thing with the database. '.repeat(8),
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'what to find' } },
      required: ['query'],
    },
  }));
  return {
    model: 'gpt-4.1-mini',
    systemPrompt: 'You are Metatron. '.repeat(1_100),
    history,
    userMessage: 'What is on my calendar tomorrow?',
    tools,
    maxToolRounds: 20,
    maxOutputTokens: 8_192,
    signal: new AbortController().signal,
  };
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  const api = await startBenchApp(fake);
  try {
    const budget = api.app.get(BudgetService);
    const sink = {
      onText: () => undefined,
      executeTool: async () => '{}',
    };
    const guarded = budget.guard(bare, {
      source: 'cron',
      modelId: 'gpt-4.1-mini',
      provider: 'openai',
    });
    const req = request();
    // Warm-up (JIT, the settings cache, the first inserts).
    for (let i = 0; i < 200; i++) {
      turnStarted = performance.now();
      await guarded.streamTurn(req, sink);
    }

    const bareTimes: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      turnStarted = started;
      await bare.streamTurn(req, sink);
      bareTimes.push(performance.now() - started);
    }
    onCallPath.length = 0;
    const cpu = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      turnStarted = performance.now();
      await guarded.streamTurn(req, sink);
      cleanup.push(performance.now() - callEnded);
    }
    const times = [...onCallPath];
    const cpuMs =
      (process.cpuUsage(cpu).user + process.cpuUsage(cpu).system) / 1000;
    const concurrentTimes: number[] = [];
    for (let batch = 0; batch < CALLS / CONCURRENT; batch++)
      await Promise.all(
        Array.from({ length: CONCURRENT }, async () => {
          const started = performance.now();
          await guarded.streamTurn(req, sink);
          concurrentTimes.push(performance.now() - started);
        }),
      );
    const added = percentile(times, 0.95);
    console.log(
      `budget time on a model call's path (estimate + reservation before it goes out, settlement after): p50 ${percentile(times, 0.5).toFixed(3)} ms, p95 ${percentile(times, 0.95).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms over ${CALLS} calls (the bare adapter's own call: p50 ${percentile(bareTimes, 0.5).toFixed(4)} ms)`,
    );
    console.log(
      `end of a turn, after its reply (the reservation record's removal once its insert landed): p50 ${percentile(cleanup, 0.5).toFixed(2)} ms, p95 ${percentile(cleanup, 0.95).toFixed(2)} ms`,
    );
    console.log(
      `CPU time: ${(cpuMs / CALLS).toFixed(3)} ms per guarded call (user + system, the record inserts included)`,
    );
    console.log(
      `${CONCURRENT} turns at once, whole guarded turn: p50 ${percentile(concurrentTimes, 0.5).toFixed(2)} ms, p95 ${percentile(concurrentTimes, 0.95).toFixed(2)} ms`,
    );
    const view = await budget.view();
    console.log(
      `ledger after ${CALLS * 2 + 200} calls: ${view.spent.unattendedTodayUsd.toFixed(2)} USD spent, ${view.reservedUsd} held`,
    );
    if (added > GOAL_P95_MS) {
      console.error(
        `MISS: the budget check adds ${added.toFixed(3)} ms at p95 (goal ≤ ${GOAL_P95_MS} ms)`,
      );
      if (!SMOKE) process.exitCode = 1;
    } else
      console.log(
        `ok: the budget check adds ${added.toFixed(3)} ms at p95 (goal ≤ ${GOAL_P95_MS} ms)`,
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
