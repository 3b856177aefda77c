// Conversation figures (issue 3), against the fake provider upstream:
//  1. time to first token through POST /api/chats/:id/messages vs the same SDK call straight to the fake, p50/p95, 1 and 50 concurrent
//     (goal: at most 10 ms added at p95). Issue 19 A took the message insert off the path to the first token (the model is called
//     while it is stored) and a new chat's history read; on the shared 2-core machine that moved "added at p95" at 50 streams from
//     +888…+1535 ms to +322…+569 ms and at 1 stream from +10…+30 ms to +10…+19 ms (noisy; see docs/operations.md, "Performance").
//     What is left at 50 streams is CPU shared by the API, FerretDB, the fake and this client, not a queue.
//     Before the timed rounds, each stream's connection (this client to the API, the SDK to the fake) is opened by a cheap
//     request: until stop 45 the first round also timed this one thread opening them (docs/operations.md, "Stop 45").
//  2. buildCombinedPrompt() p95 with all sections;
//  3. db_query find through the sandbox vs the raw driver call.
// Goals (issue 30 for the time to first token added at 1/20/50 streams: ≤ 10/60/150 ms at p95): a miss is printed and the bench
// exits 1. Run by `npm run bench` (ts-node, paths from apps/api/tsconfig.app.json) after the API build. BENCH_ONLY=ttft runs part 1
// alone; BENCH_API_MAIN=<path to main.js> starts another build (a copy of dist/ from before a change) for a before/after comparison;
// BENCH_SMOKE=1 runs every part with small sizes and checks no goal (part of `npm test`).
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import OpenAI from 'openai';
import { AppModule } from '../../apps/api/src/app/app.module';
import { PasswordHasher } from '../../apps/api/src/auth/password-hasher';
import { loadAppConfig } from '../../apps/api/src/config/app-config';
import { EmbeddedDatabase } from '../../apps/api/src/database/embedded-database';
import { MongoSandboxService } from '../../apps/api/src/mongo-sandbox/mongo-sandbox.service';
import { CombinedPromptBuilder } from '../../apps/api/src/system-instruction/combined-prompt.builder';
import { SystemInstructionService } from '../../apps/api/src/system-instruction/system-instruction.service';
import { startBuiltApi } from './built-api';
import { hostSpeedLine, hostSpeedMs } from './host-speed';
import { cpuSplit, cpuSpent, type CpuSplit } from './process-cpu';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../fake-llm/fake-llm-server';

const root = process.cwd();
/** BENCH_ONLY=ttft runs the time-to-first-token part alone. */
const ONLY = process.env.BENCH_ONLY;
const SMOKE = process.env.BENCH_SMOKE === '1';
/** Goals missed so far, printed at the end (the bench then exits 1). */
const misses: string[] = [];
function goal(what: string, value: number, limit: number, unit = 'ms') {
  if (!SMOKE && !(value <= limit))
    misses.push(
      `${what}: ${value.toFixed(2)} ${unit} (goal ≤ ${limit} ${unit})`,
    );
}
/** Time to first token the API may add at p95, by concurrent streams (issue 30). */
const TTFT_GOALS: ReadonlyArray<[streams: number, rounds: number, ms: number]> =
  SMOKE
    ? [
        [1, 5, Infinity],
        [5, 1, Infinity],
      ]
    : [
        [1, 100, 10],
        [20, 5, 60],
        [50, 4, 150],
      ];

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  ];
};
const fmt = (xs: number[]) =>
  `p50 ${percentile(xs, 50).toFixed(2)} ms, p95 ${percentile(xs, 95).toFixed(2)} ms (n=${xs.length})`;

const sumSplits = (a: CpuSplit | null, b: CpuSplit): CpuSplit =>
  a
    ? {
        apiMain: a.apiMain + b.apiMain,
        apiOther: a.apiOther + b.apiOther,
        database: a.database + b.database,
        bench: a.bench + b.bench,
      }
    : b;

/** Reads an SSE body until the first `delta` event; returns ms since `started`, then drains the rest. */
async function firstDelta(res: Response, started: number): Promise<number> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let at = -1;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    if (at < 0 && buffer.includes('event: delta'))
      at = performance.now() - started;
  }
  if (at < 0) throw new Error(`no delta in the reply: ${buffer.slice(0, 300)}`);
  return at;
}

async function ttft(
  fake: FakeLlmServer,
  concurrency: number,
  rounds: number,
  goalMs: number,
) {
  const api = await startBuiltApi(fake);
  const sdk = new OpenAI({
    apiKey: 'sk-bench-000000000000',
    baseURL: fake.openaiBaseUrl,
    maxRetries: 0,
  });
  fake.openai.fallback = { text: ['Hello', ' there', '.'] };
  const chats: string[] = [];
  for (let i = 0; i < concurrency; i++) {
    const res = await fetch(`${api.url}/api/chats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: api.cookie },
      body: '{}',
    });
    chats.push(((await res.json()) as { id: string }).id);
  }
  const viaApi = async (chatId: string) => {
    const started = performance.now();
    const res = await fetch(`${api.url}/api/chats/${chatId}/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        cookie: api.cookie,
      },
      body: JSON.stringify({ content: 'Say hello' }),
    });
    if (res.status !== 200)
      throw new Error(`send: ${res.status} ${await res.text()}`);
    return firstDelta(res, started);
  };
  const direct = async () => {
    const started = performance.now();
    const stream = await sdk.chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
    });
    let at = -1;
    for await (const chunk of stream)
      if (at < 0 && chunk.choices[0]?.delta?.content)
        at = performance.now() - started;
    return at;
  };
  // Warm up both paths (JIT, connection pools, indexes).
  for (let i = 0; i < 5; i++) {
    await viaApi(chats[0]);
    await direct();
  }
  // This process's own connections, one per stream on each path, opened by a cheap request each
  // (`GET /api/health`, the fake's `GET /v1/models`). Otherwise the first round also timed this
  // one thread (client and fake provider) opening them, which spread the requests' arrival over
  // ~400 ms at 50 streams. The API's own connections to the provider stay cold: that is its work.
  for (const url of [`${api.url}/api/health`, `${fake.openaiBaseUrl}/models`])
    await Promise.all(chats.map(async () => (await fetch(url)).arrayBuffer()));
  const apiTimes: number[] = [];
  const directTimes: number[] = [];
  const pid = api.child.pid as number;
  let spent: CpuSplit | null = null;
  for (let r = 0; r < rounds; r++) {
    const before = cpuSplit(pid);
    apiTimes.push(...(await Promise.all(chats.map((id) => viaApi(id)))));
    const after = cpuSplit(pid);
    if (before && after) spent = sumSplits(spent, cpuSpent(before, after));
    directTimes.push(...(await Promise.all(chats.map(() => direct()))));
  }
  api.child.kill('SIGTERM');
  await new Promise((done) => api.child.once('exit', done));
  rmSync(api.dataDir, { recursive: true, force: true });
  fake.openai.reset();
  const added95 = percentile(apiTimes, 95) - percentile(directTimes, 95);
  console.log(
    `TTFT at ${concurrency} concurrent: via API ${fmt(apiTimes)}; direct SDK ${fmt(directTimes)}; added at p95 ${added95.toFixed(2)} ms (goal ≤ ${goalMs} ms; load average ${loadavg()[0].toFixed(2)})`,
  );
  if (rounds > 1 && concurrency > 1)
    console.log(
      `  via API, first round p95 ${percentile(apiTimes.slice(0, concurrency), 95).toFixed(2)} ms, later rounds p95 ${percentile(apiTimes.slice(concurrency), 95).toFixed(2)} ms (the first runs on a server warmed by 5 turns)`,
    );
  if (spent) {
    const turns = rounds * concurrency;
    const per = (ms: number) => (ms / turns).toFixed(2);
    console.log(
      `  CPU a turn during the API rounds: API main thread ${per(spent.apiMain)} ms, its other threads ${per(spent.apiOther)} ms (V8's compiler and GC), database ${per(spent.database)} ms, this process ${per(spent.bench)} ms (client and fake provider)`,
    );
  }
  goal(
    `time to first token added at ${concurrency} streams, p95`,
    added95,
    goalMs,
  );
}

async function internals() {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const database = await EmbeddedDatabase.start({
    binPath: join(root, 'tools/ferretdb/bin/ferretdb-launcher'),
    dataDir,
  });
  const config = loadAppConfig({
    DATA_DIR: dataDir,
    WEB_DIST_DIR: join(dataDir, 'none'),
  });
  const app = await NestFactory.create(
    AppModule.forRoot({
      config,
      database: { kind: 'embedded', uri: database.uri, dbName: 'bench' },
      passwordHasher: new PasswordHasher({ N: 1024, r: 8, p: 1 }),
    }),
    { logger: ['error'] },
  );
  await app.init();
  try {
    // buildCombinedPrompt with every section filled.
    const instruction = app.get(SystemInstructionService);
    await instruction.updateSystemInstruction({
      memory: '- '.padEnd(3900, 'memory '),
      dbSchema: '## ai_books\n'.padEnd(3000, '| f | t |\n'),
    });
    const builder = app.get(CombinedPromptBuilder);
    const promptTimes: number[] = [];
    const promptRuns = SMOKE ? 220 : 2000;
    for (let i = 0; i < promptRuns; i++) {
      const started = performance.now();
      await builder.buildCombinedPrompt();
      promptTimes.push(performance.now() - started);
    }
    console.log(
      `buildCombinedPrompt() with all sections: ${fmt(promptTimes.slice(200))} (goal p95 ≤ 5 ms)`,
    );
    goal(
      'buildCombinedPrompt() p95',
      percentile(promptTimes.slice(200), 95),
      5,
    );

    // db_query find vs the raw driver, same query, interleaved.
    const connection = app.get<Connection>(getConnectionToken());
    const books = connection.db!.collection('ai_books');
    await books.insertMany(
      Array.from({ length: 500 }, (_, i) => ({
        title: `Book ${i}`,
        author: `Author ${i % 37}`,
        year: 1900 + (i % 120),
        tags: ['a', 'b'],
      })),
    );
    const sandbox = app.get(MongoSandboxService);
    const op = {
      operation: 'find',
      collection: 'ai_books',
      filter: { year: { $gte: 1950 } },
      options: { sort: { year: 1 }, limit: 50 },
    };
    const sandboxTimes: number[] = [];
    const rawTimes: number[] = [];
    for (let i = 0; i < (SMOKE ? 60 : 400); i++) {
      let started = performance.now();
      const result = await sandbox.execute(op);
      JSON.stringify(result);
      sandboxTimes.push(performance.now() - started);
      started = performance.now();
      const rows = await books
        .find(
          { year: { $gte: 1950 } },
          { sort: { year: 1 }, limit: 50, maxTimeMS: 5000 },
        )
        .toArray();
      JSON.stringify({ rows });
      rawTimes.push(performance.now() - started);
    }
    const ratio =
      percentile(sandboxTimes.slice(50), 50) /
      percentile(rawTimes.slice(50), 50);
    console.log(
      `db_query find (50 of 500 docs): sandbox ${fmt(sandboxTimes.slice(50))}; raw driver ${fmt(rawTimes.slice(50))}; ratio at p50 ${ratio.toFixed(2)}× (goal ≤ 1.2×)`,
    );
    goal('db_query find vs the raw driver at p50', ratio, 1.2, '×');
  } finally {
    await app.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  if (ONLY !== 'ttft') await internals();
  const fake = await startFakeLlmServer();
  // These figures move with the host more than with most changes: its speed is printed beside them.
  const speedBefore = hostSpeedMs();
  try {
    for (const [streams, rounds, goalMs] of TTFT_GOALS)
      await ttft(fake, streams, rounds, goalMs);
  } finally {
    await fake.close();
  }
  console.log(hostSpeedLine(speedBefore, hostSpeedMs()));
  if (SMOKE) console.log('smoke run: goals not checked');
  else if (misses.length) {
    console.log(`goals missed:\n- ${misses.join('\n- ')}`);
    return 1;
  } else console.log('all goals met');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
