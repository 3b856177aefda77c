// CPU the API process spends on one chat turn (issue 30), read from /proc/<pid>/stat around N sequential turns of the
// built server against the fake provider on loopback: a plain turn (a short streamed answer, no tools) and a turn with
// one tool round (db_query, then the answer). CPU time, not wall time, because this machine is shared: a wall figure
// is printed beside the load average only as context.
// The plain turn is measured with OpenAI, then with Gemini.
// Goals: ≤ 5 ms per plain turn (either provider), ≤ 2 ms more per tool round. Exits 1 on a miss.
// BENCH_SMOKE=1: a few turns, no goals (part of `npm test`). BENCH_API_MAIN=<main.js>: another build, for a before/after.
// BENCH_CPU_PROF=<dir>: the API runs with --cpu-prof into that directory (the profile is written when it stops).
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startBuiltApi, type BuiltApi } from './built-api';
import { startFakeLlmServer } from '../fake-llm/fake-llm-server';

const SMOKE = process.env.BENCH_SMOKE === '1';
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const TURNS = SMOKE ? 5 : Number(process.env.BENCH_TURNS ?? 100);
const WARM_UP_TURNS = SMOKE ? 2 : 20;
const PLAIN_GOAL_MS = 5;
const TOOL_ROUND_GOAL_MS = 2;
/** Clock ticks per second for /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_S = 100;

/** User + system CPU of a process so far, in ms (fields 14 and 15 of /proc/<pid>/stat). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

async function newChat(api: BuiltApi): Promise<string> {
  const res = await fetch(`${api.url}/api/chats`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: api.cookie },
    body: '{}',
  });
  return ((await res.json()) as { id: string }).id;
}

/** One turn over SSE, read to the end; throws unless the stream ended with `done`. */
async function turn(api: BuiltApi, chatId: string, content: string) {
  const res = await fetch(`${api.url}/api/chats/${chatId}/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      cookie: api.cookie,
    },
    body: JSON.stringify({ content }),
  });
  const body = await res.text();
  if (res.status !== 200 || !body.includes('event: done'))
    throw new Error(`turn: ${res.status} ${body.slice(0, 400)}`);
}

async function saveSettings(api: BuiltApi, settings: Record<string, unknown>) {
  const res = await fetch(`${api.url}/api/settings`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', cookie: api.cookie },
    body: JSON.stringify(settings),
  });
  if (!res.ok) throw new Error(`settings: ${res.status} ${await res.text()}`);
}

/** A short streamed answer: 20 pieces, as a model's reply of a sentence or two arrives. */
const ANSWER = Array.from({ length: 20 }, (_, i) => (i ? ` word${i}` : 'Hi'));

async function measure(
  api: BuiltApi,
  label: string,
  run: (chatId: string) => Promise<void>,
): Promise<number> {
  // A few chats, so history stays short as in a real conversation and the per-chat cost is counted.
  const chats = await Promise.all(
    Array.from({ length: 10 }, () => newChat(api)),
  );
  // Warm-up (JIT, pools, the SDKs loaded at first use), then a pause past the one-off work a fresh
  // start does a second after it (the compile cache's save at its first quiet moment: ~300 ms of CPU, 3 ms a turn if counted).
  for (let i = 0; i < WARM_UP_TURNS; i++) await run(chats[i % chats.length]);
  await new Promise((resume) => setTimeout(resume, SMOKE ? 0 : 1500));
  const pid = api.child.pid as number;
  const cpuBefore = cpuMs(pid);
  const wallBefore = performance.now();
  for (let i = 0; i < TURNS; i++) await run(chats[i % chats.length]);
  const perTurn = (cpuMs(pid) - cpuBefore) / TURNS;
  const wall = (performance.now() - wallBefore) / TURNS;
  console.log(
    `${label}: API CPU ${perTurn.toFixed(2)} ms per turn over ${TURNS} turns (wall ${wall.toFixed(1)} ms per turn, load average ${loadavg()[0].toFixed(2)})`,
  );
  return perTurn;
}

async function main() {
  const fake = await startFakeLlmServer();
  const api = await startBuiltApi(fake, {
    nodeArgs: PROFILE_DIR
      ? [
          '--cpu-prof',
          '--cpu-prof-interval=250',
          `--cpu-prof-dir=${PROFILE_DIR}`,
        ]
      : [],
    settings: {
      budget: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null },
    },
  });
  const misses: string[] = [];
  try {
    fake.openai.fallback = { text: ANSWER };
    const plain = await measure(api, 'plain turn', (chatId) =>
      turn(api, chatId, 'Say hello'),
    );
    // One tool round: the model asks for db_query, then answers.
    fake.openai.fallback = (request) => {
      const messages = request.body.messages as Array<{ role: string }>;
      return messages[messages.length - 1]?.role === 'tool'
        ? { text: ANSWER }
        : {
            toolCalls: [
              {
                name: 'db_query',
                arguments: {
                  operation: 'find',
                  collection: 'contacts',
                  filter: {},
                  options: { limit: 5 },
                },
              },
            ],
          };
    };
    const withTool = await measure(api, 'turn with one tool round', (chatId) =>
      turn(api, chatId, 'Look up my contacts'),
    );
    const round = withTool - plain;
    console.log(`one tool round adds ${round.toFixed(2)} ms of API CPU`);
    // The same plain turn with Gemini (its SDK, its stream format), in chats made after the switch.
    fake.gemini.fallback = { text: ANSWER };
    await saveSettings(api, {
      geminiApiKey: 'bench-gemini-key-0000',
      primaryModel: 'gemini-2.5-flash',
    });
    const gemini = await measure(api, 'plain turn, Gemini', (chatId) =>
      turn(api, chatId, 'Say hello'),
    );
    if (fake.gemini.requests.length < TURNS)
      throw new Error(
        `the Gemini turns did not reach the fake Gemini (${fake.gemini.requests.length} requests)`,
      );
    if (gemini > PLAIN_GOAL_MS)
      misses.push(
        `plain Gemini turn ${gemini.toFixed(2)} ms > ${PLAIN_GOAL_MS} ms of CPU`,
      );
    if (plain > PLAIN_GOAL_MS)
      misses.push(
        `plain turn ${plain.toFixed(2)} ms > ${PLAIN_GOAL_MS} ms of CPU`,
      );
    if (round > TOOL_ROUND_GOAL_MS)
      misses.push(
        `a tool round ${round.toFixed(2)} ms > ${TOOL_ROUND_GOAL_MS} ms of CPU`,
      );
  } finally {
    api.child.kill('SIGTERM');
    await new Promise((done) => api.child.once('exit', done));
    rmSync(api.dataDir, { recursive: true, force: true });
    await fake.close();
  }
  if (SMOKE) {
    console.log('smoke run: goals not checked');
    return 0;
  }
  if (misses.length) {
    console.log(`goals missed: ${misses.join('; ')}`);
    return 1;
  }
  console.log('all goals met');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
