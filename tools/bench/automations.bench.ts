// Automation figures (issue 5), on the real Nest app and embedded FerretDB, with the fake provider upstream:
//  1. scheduling drift: 100 jobs `* * * * *` made through REST fire at the next minute boundary on the
//     production SystemClock; drift = startedAt − dueAt per run (p50/p95/max), how many ran, time until all finished;
//  2. Pulse prompt size: GET /api/pulse/prompt with every section filled, counted with gpt-tokenizer, per `## ` section.
// Goals (a miss exits 1): every run starts, drift p95 ≤ 1000 ms (issue 30: 100 jobs due at once start within 1 s p95), and
// so does the stricter figure, each turn's user message (made when the turn has begun, just before its model call) − dueAt;
// the Pulse prompt ≤ 4000 tokens. BENCH_SMOKE=1 (npm test): part 2 only, no goal (part 1 waits for a minute boundary).
// Run by `npm run bench` (ts-node, paths from apps/api/tsconfig.app.json); alone: `node tools/bench/run-all.mjs automations`
// (builds first), or without the build: TS_NODE_PROJECT=apps/api/tsconfig.app.json TS_NODE_TRANSPILE_ONLY=true
//   node -r ts-node/register -r ./tools/bench/register-paths.cjs tools/bench/automations.bench.ts
import 'reflect-metadata';
import { availableParallelism, loadavg } from 'node:os';

import { getConnectionToken } from '@nestjs/mongoose';
import { encode as encodeO200k } from 'gpt-tokenizer';
import { encode as encodeCl100k } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import type { Connection } from 'mongoose';
import { Types } from 'mongoose';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../fake-llm/fake-llm-server';
import { startBenchApp, type BenchApp } from './in-process-app';

const SMOKE = process.env['BENCH_SMOKE'] === '1';
const DRIFT_GOAL_P95_MS = 1000;
const PULSE_PROMPT_GOAL_TOKENS = 4000;
const misses: string[] = [];
const JOBS = 100;
const MINUTE = 60_000;
/** Creating 100 jobs takes ~20 s here (every create reloads and re-checks every job): start it early in a minute. */
const CREATE_WINDOW_MS = 45_000;
/** A boundary closer than this after the creation would race it: use the next one. */
const BOUNDARY_MARGIN_MS = 5_000;
/** After the boundary: every run must have started by then (before the next boundary) … */
const START_BUDGET_MS = 55_000;
/** … and every turn ended. */
const FINISH_BUDGET_MS = 90_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  ];
};

interface RunRow {
  jobId: Types.ObjectId;
  outcome: string;
  dueAt: Date | null;
  startedAt: Date;
  finishedAt: Date | null;
  error: string | null;
  reason: string | null;
}

async function schedulingDrift(
  api: BenchApp,
  fake: FakeLlmServer,
): Promise<void> {
  fake.openai.fallback = { text: ['Done.'] };
  const db = api.app.get<Connection>(getConnectionToken()).db;
  if (!db) throw new Error('the app has no database connection');
  const runs = db.collection<RunRow>('automation_runs');
  const nextBoundary = () => Math.ceil((Date.now() + 1) / MINUTE) * MINUTE;

  // Jobs made in minute M fire at the start of M+1: make them all in one minute, clear of its end.
  if (nextBoundary() - Date.now() < CREATE_WINDOW_MS)
    await sleep(nextBoundary() - Date.now() + 200);
  const plannedBoundary = nextBoundary();
  const createStarted = performance.now();
  const ids: string[] = [];
  try {
    for (let i = 0; i < JOBS; i++) {
      const job = await api.call<{ id: string }>('POST', '/api/cronjobs', {
        name: `Bench job ${i + 1}`,
        instruction: 'Reply with the single word "Done".',
        cronExpression: '* * * * *',
      });
      ids.push(job.id);
    }
    const createMs = performance.now() - createStarted;
    // On a slow machine the creation may cross a boundary (some jobs fire early): measure at the next one.
    let boundaryMs = nextBoundary();
    if (boundaryMs - Date.now() < BOUNDARY_MARGIN_MS) boundaryMs += MINUTE;
    const boundary = new Date(boundaryMs);
    console.log(
      `Created ${JOBS} jobs through POST /api/cronjobs in ${createMs.toFixed(0)} ms (${(createMs / JOBS).toFixed(0)} ms each); measuring the boundary at ${boundary.toISOString()}` +
        (boundaryMs !== plannedBoundary
          ? ` (the creation crossed ${new Date(plannedBoundary).toISOString()})`
          : ''),
    );

    // Wait for the boundary, then for the runs of that minute to start, then for their turns to end.
    const load = () =>
      `load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`;
    const ofMinute = {
      kind: 'cron',
      jobId: { $in: ids.map((id) => new Types.ObjectId(id)) },
      dueAt: boundary,
    };
    await sleep(Math.max(0, boundaryMs - 1_000 - Date.now()));
    const loadBefore = load();
    // The database's health through the minute: a slow ping under this load is not a dead database.
    const health = { checks: 0, notUp: [] as string[] };
    let watching = true;
    const watchHealth = (async () => {
      while (watching) {
        health.checks++;
        const status = await api
          .call<{ db: string }>('GET', '/api/health')
          .then((body) => body.db)
          .catch((error: Error) => error.message);
        if (status !== 'up') health.notUp.push(status);
        await sleep(250);
      }
    })();
    await sleep(Math.max(0, boundaryMs - Date.now() + 1_000));
    let rows: RunRow[] = await runs.find(ofMinute).toArray();
    while (
      new Set(rows.map((r) => r.jobId.toHexString())).size < JOBS &&
      Date.now() < boundaryMs + START_BUDGET_MS
    ) {
      await sleep(250);
      rows = await runs.find(ofMinute).toArray();
    }
    while (
      rows.some((r) => r.outcome === 'running') &&
      Date.now() < boundaryMs + FINISH_BUDGET_MS
    ) {
      await sleep(250);
      rows = await runs.find(ofMinute).toArray();
    }

    watching = false;
    await watchHealth;
    console.log(
      `Database health during the minute: ${health.checks} checks, ${health.notUp.length} not up (goal 0)${health.notUp.length ? `: ${health.notUp[0].slice(0, 200)}` : ''}`,
    );
    if (health.notUp.length)
      misses.push(
        `database health not up in ${health.notUp.length} of ${health.checks} checks`,
      );
    const started = rows.filter(
      (r) => r.outcome !== 'skipped' && r.outcome !== 'missed',
    );
    const drift = started.map((r) => r.startedAt.getTime() - boundaryMs);
    const succeeded = started.filter((r) => r.outcome === 'success');
    const counts = new Map<string, number>();
    for (const r of rows)
      counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
    const outcomes =
      [...counts].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
    console.log(
      drift.length
        ? `Scheduling drift (startedAt − dueAt): p50 ${percentile(drift, 50)} ms, p95 ${percentile(drift, 95)} ms, max ${Math.max(...drift)} ms (first ${Math.min(...drift)} ms); ${started.length}/${JOBS} ran (goal p95 ≤ 1000 ms, all ${JOBS}; ${loadBefore})`
        : `Scheduling drift: no run started within ${START_BUDGET_MS / 1000} s of the boundary; 0/${JOBS} ran (goal p95 ≤ 1000 ms, all ${JOBS})`,
    );
    const driftP95 = drift.length ? percentile(drift, 95) : Infinity;
    if (started.length < JOBS || driftP95 > DRIFT_GOAL_P95_MS)
      misses.push(
        `${started.length}/${JOBS} jobs started, drift p95 ${driftP95} ms (goal all, p95 ≤ ${DRIFT_GOAL_P95_MS} ms)`,
      );
    // Stricter: when each turn's user message was made (the chat turn has begun and the model call follows). startedAt is
    // when the scheduler decided to run the job; until stop 46 the turns began 1.3–2.3 s after it (see docs/operations.md).
    const chatIds = started.map(
      (r) => (r as RunRow & { chatId: Types.ObjectId }).chatId,
    );
    const userMessages = await db
      .collection<{ chatId: Types.ObjectId; role: string; createdAt: Date }>(
        'messages',
      )
      .find({
        chatId: { $in: chatIds },
        role: 'user',
        createdAt: { $gte: boundary },
      })
      .toArray();
    const turnDrift = userMessages.map(
      (m) => m.createdAt.getTime() - boundaryMs,
    );
    const turnP95 = turnDrift.length ? percentile(turnDrift, 95) : Infinity;
    console.log(
      turnDrift.length
        ? `Turn begun (its user message's createdAt) − dueAt: p50 ${percentile(turnDrift, 50)} ms, p95 ${turnP95} ms, max ${Math.max(...turnDrift)} ms over ${turnDrift.length} turns (goal p95 ≤ ${DRIFT_GOAL_P95_MS} ms)`
        : 'Turn begun: no user message stored for the runs',
    );
    if (turnDrift.length < started.length || turnP95 > DRIFT_GOAL_P95_MS)
      misses.push(
        `${turnDrift.length}/${started.length} turns begun, p95 ${turnP95} ms after the due time (goal p95 ≤ ${DRIFT_GOAL_P95_MS} ms)`,
      );
    const failed = rows.find((r) => r.error || r.reason);
    console.log(
      succeeded.length === JOBS
        ? `All ${JOBS} turns finished (success) ${Math.max(...succeeded.map((r) => r.finishedAt?.getTime() ?? NaN)) - boundaryMs} ms after the boundary`
        : `${succeeded.length}/${JOBS} turns ended in success within ${FINISH_BUDGET_MS / 1000} s of the boundary (runs: ${outcomes})${failed ? `; e.g. "${failed.error ?? failed.reason}"` : ''}`,
    );
  } finally {
    // Pause first so no further minute fires while the jobs (their chats and runs) are deleted.
    for (const id of ids)
      await api
        .call('PATCH', `/api/cronjobs/${id}`, { enabled: false })
        .catch(() => undefined);
    for (const id of ids)
      await api.call('DELETE', `/api/cronjobs/${id}`).catch(() => undefined);
    fake.openai.reset();
  }
}

const MEMORY = [
  '- Owner: Claire Martin, prefers "Claire"; product designer at Atelier Nord (remote, team in Lyon).',
  '- Lives in Paris 11e with partner Julien and their daughter Léa (born 2019-04-12, CE1 at École Voltaire).',
  '- Works 9:30–18:00 Mon–Thu, Fridays until 13:00; no meetings before 10:00; deep-work blocks on Tuesday mornings.',
  '- Speaks French with family, English at work; answer in English unless she writes in French.',
  '- Runs on Monday, Wednesday and Saturday mornings (training for the Paris half-marathon in March, goal under 1h50).',
  '- Vegetarian; allergic to hazelnuts; likes Japanese and Lebanese food; favourite place: Le Servan.',
  '- Mother (Anne) in Rennes: calls every Sunday around 18:00; birthday 14 June; likes orchids and crime novels.',
  '- Brother Thomas in Montréal (6 h behind Paris); nephew Hugo turns 10 on 2 September.',
  '- Dentist Dr. Benali every six months (last visit October); GP Dr. Roche, Tuesday and Thursday afternoons.',
  '- Car: none; uses Vélib and the metro; a Navigo pass renewed on the 1st of each month.',
  '- Budget: rent paid on the 5th; saves 400 € a month for a summer trip to Portugal (Porto and the Douro valley).',
  '- Prefers short bullet summaries, dislikes long preambles; wants reminders the evening before, at 20:00.',
  '- Ongoing: renovating the bathroom (quote from Dubois & Fils, decision due end of month).',
  '- Reading club with friends on the first Thursday of the month at Marion\'s; currently reading "Klara and the Sun".',
].join('\n');

const NOTES_LINES = [
  'Pulse notes (handover):',
  "- Checked schedule through Sunday: dentist reminder set for Thu 14:30; reading club Thu 19:30 at Marion's (bring the book).",
  "- Contacts: Anne's birthday in 12 days; suggested orchid delivery, owner has not answered yet. Ask again on Friday if still open.",
  '- Open items: bathroom quote from Dubois & Fils (decision due on the 30th); compare with the second quote once it arrives by email.',
  '- Half-marathon plan: week 6 of 12; long run Saturday 16 km; owner reported knee pain on Wednesday, suggested a rest day, follow up.',
  '- Portugal trip: flights Paris–Porto watched, price dropped to 118 € return; owner wanted a note when under 110 €.',
  '- Léa: school trip form due Monday; permission slip printed? Not confirmed. Remind Sunday evening at 20:00.',
  '- Thomas (Montréal): video call proposed Saturday 15:00 Paris time (09:00 there); waiting for his confirmation.',
  '- Done this pulse: archived three past schedule entries, updated lastContactAt for Marion and Dr. Benali.',
  '- Do not repeat: weekly summary already sent Monday; Navigo renewal already reminded.',
];

function notesAtMaximum(max: number): string {
  let notes = NOTES_LINES.join('\n');
  for (let i = 1; notes.length < max; i++)
    notes += `\n- Earlier pulse ${i}: nothing new in schedule or contacts; left the open items above as they were.`;
  return notes.slice(0, max);
}

async function pulsePromptSize(api: BenchApp): Promise<void> {
  const instruction = await api.call<{
    coreInstruction: string;
    dbSchema: string;
  }>('PATCH', '/api/system-instruction', {
    memory: MEMORY,
    memoryEnabled: true,
  });
  await api.call('PATCH', '/api/pulse', {
    enabled: true,
    activeDays: [1, 2, 3, 4, 5, 6, 0],
    pulsesPerDay: 12,
    quietHours: [{ start: '22:00', end: '07:00' }],
    notes: notesAtMaximum(2_000),
  });
  const pulse = await api.call<{ notes: string }>('GET', '/api/pulse');
  const { prompt } = await api.call<{ prompt: string | null }>(
    'GET',
    '/api/pulse/prompt',
  );
  await api.call('PATCH', '/api/pulse', { enabled: false });
  if (!prompt) throw new Error('GET /api/pulse/prompt returned no prompt');

  const o200k = encodeO200k(prompt).length;
  const cl100k = encodeCl100k(prompt).length;
  console.log(
    `Pulse prompt (core ${instruction.coreInstruction.length} chars, memory ${MEMORY.length}, database doc ${instruction.dbSchema.length}, notes ${pulse.notes.length}): ` +
      `${prompt.length} chars, ${o200k} tokens o200k_base, ${cl100k} tokens cl100k_base (goal ≤ 4000 before history)`,
  );
  if (o200k > PULSE_PROMPT_GOAL_TOKENS)
    misses.push(
      `Pulse prompt ${o200k} tokens (goal ≤ ${PULSE_PROMPT_GOAL_TOKENS})`,
    );
  // Per `## ` section; what comes before the first one is the core instruction (and the `---` after it).
  const parts: { title: string; text: string }[] = [];
  let current = { title: '(core instruction)', text: '' };
  for (const line of prompt.split('\n')) {
    if (line.startsWith('## ')) {
      parts.push(current);
      current = { title: line.slice(3).trim(), text: '' };
    }
    current.text += `${line}\n`;
  }
  parts.push(current);
  const rows = parts.map((p) => ({ ...p, tokens: encodeO200k(p.text).length }));
  const width = Math.max(...rows.map((r) => r.title.length));
  for (const r of rows) {
    console.log(
      `  ${r.title.padEnd(width)}  ${String(r.text.length).padStart(6)} chars  ${String(r.tokens).padStart(5)} tokens  ${((100 * r.tokens) / o200k).toFixed(1).padStart(5)}%`,
    );
  }
}

/** Nothing here should take this long; if it does, say so and stop rather than hang. */
const WATCHDOG_MS = 300_000;

async function main() {
  setTimeout(() => {
    console.error(
      `automations.bench: still running after ${WATCHDOG_MS / 1000} s; giving up`,
    );
    process.exit(1);
  }, WATCHDOG_MS).unref();
  const fake = await startFakeLlmServer();
  try {
    const api = await startBenchApp(fake);
    try {
      if (SMOKE)
        console.log(
          'smoke run: scheduling drift not measured (it waits for a minute boundary)',
        );
      else await schedulingDrift(api, fake);
      await pulsePromptSize(api);
    } finally {
      await api.close();
    }
  } finally {
    await fake.close();
  }
}

main().then(
  () => {
    if (SMOKE) console.log('smoke run: goals not checked');
    else if (misses.length) {
      console.log(`goals missed:\n- ${misses.join('\n- ')}`);
      process.exitCode = 1;
    }
    // Exits by itself; if something still holds the loop, say what and stop.
    setTimeout(() => {
      console.error(
        `still running 5 s after the end: ${process.getActiveResourcesInfo().join(', ')}`,
      );
      process.exit(1);
    }, 5_000).unref();
  },
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
