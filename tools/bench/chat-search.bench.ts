// Chat list search (issue 14): GET /api/chats?q= on the real app (in this process) and its embedded FerretDB,
// with 1,000 chats and 20,000 messages (~300 characters each) inserted straight into the database. FerretDB
// filters anything but `_id` outside SQLite, so the app reads every message into the in-memory index
// (ChatSearchIndex) after it listens; rows inserted behind its back are read as a restored backup's are.
// The chats themselves are kept in memory (ChatList), read again on the same restore. This prints that read,
// waits for the restore's other work in this process (the memory index) to end, then the median and p95
// latency (and the process's CPU per request, the bench's own HTTP client included) of every search shape:
// one word, a prefix, several words, nothing matching, a very common word, with the archive filter, just
// after a reply (its two messages handed over as ChatReplyService does, no read), and of the plain list. Goal (issue 30): every
// search p95 ≤ 100 ms; the list ≤ 500 ms.
// Sizes: BENCH_CHATS (default 1000), BENCH_MESSAGES (default 20000); rounds per row: BENCH_ROUNDS (default 40;
// with 15 the p95 was the slowest request, which on the shared machine is whichever one the scheduler delayed).
// Alone: TS_NODE_PROJECT=apps/api/tsconfig.app.json TS_NODE_TRANSPILE_ONLY=true
//   node -r ts-node/register -r ./tools/bench/register-paths.cjs tools/bench/chat-search.bench.ts
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { ChatSearchIndex } from '../../apps/api/src/chats/chat-search-index';
import { TURN_STORED } from '../../apps/api/src/chats/stored-turn';
import { AppEventBus } from '../../apps/api/src/events/app-event-bus';
import { MemoryIndex } from '../../apps/api/src/memory/memory-index';
import { messageDoc } from '../../apps/api/test/support/message-doc';
import { startFakeLlmServer } from '../fake-llm/fake-llm-server';
import { startBenchApp } from './in-process-app';

const CHATS = Number(process.env['BENCH_CHATS'] ?? 1000);
const MESSAGES = Number(process.env['BENCH_MESSAGES'] ?? 20_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 40);
/** What the owner waits for at most when typing into the search box (issue 30), and for the list. */
const SEARCH_TARGET_MS = 100;
const LIST_TARGET_MS = 500;

const WORDS =
  'plan week trip budget recipe garden meeting invoice report travel weather music book review code deploy server backup family call list'.split(
    ' ',
  );

function text(seed: number, length: number): string {
  const out: string[] = [];
  let n = seed;
  while (out.join(' ').length < length) {
    n = (n * 1103515245 + 12345) % 2 ** 31;
    out.push(WORDS[n % WORDS.length]);
  }
  return out.join(' ');
}

/** Waits until the process spent under 5 % of a core over half a second (at most 60 s); resolves to how long that took. */
async function settled(): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    const cpu = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const spent = process.cpuUsage(cpu);
    if ((spent.user + spent.system) / 1000 < 25) break;
  }
  return performance.now() - started;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  const api = await startBenchApp(fake);
  try {
    const db = api.app.get<Connection>(getConnectionToken()).db;
    if (!db) throw new Error('no database connection');
    const start = Date.now() - MESSAGES * 1000;
    const chats = Array.from({ length: CHATS }, (_, i) => ({
      _id: new Types.ObjectId(),
      title: `Chat ${i} about ${text(i, 20)}`,
      autoTitle: false,
      kind: 'chat',
      pinned: i % 50 === 0,
      archived: i % 10 === 9,
      model: null,
      createdAt: new Date(start + i * 1000),
      updatedAt: new Date(start + i * 1000),
    }));
    await db.collection('chats').insertMany(chats);
    for (let from = 0; from < MESSAGES; from += 1000) {
      const batch = Array.from(
        { length: Math.min(1000, MESSAGES - from) },
        (_, k) => {
          const i = from + k;
          const at = new Date(start + i * 1000);
          // A rare word in 5 messages, a common one in every 10th.
          const extra =
            i % 4000 === 17 ? ' zanzibar' : i % 10 === 3 ? ' dentist' : '';
          return messageDoc({
            chatId: chats[i % CHATS]._id,
            role: i % 2 ? 'assistant' : 'user',
            content: text(i, 300) + extra,
            at,
          });
        },
      );
      await db.collection('messages').insertMany(batch);
    }

    const events = api.app.get(AppEventBus);
    const emitter = api.app.get(EventEmitter2);
    let round = 0;
    let lastReply: { chatId: string; word: string } | null = null;
    const rows: Array<{
      name: string;
      path: string;
      target: number;
      /** Done before each request, outside its time. */
      before?: () => Promise<void>;
    }> = [
      {
        name: 'chat list (no search)',
        path: '/api/chats',
        target: LIST_TARGET_MS,
      },
      { name: 'one word, 5 chats match', path: '/api/chats?q=Zanzibar' },
      { name: 'a prefix', path: '/api/chats?q=zanz' },
      {
        name: 'several words',
        path: '/api/chats?q=garden%20meeting%20invoice',
      },
      { name: 'nothing matches', path: '/api/chats?q=no-such-word' },
      { name: 'a common word', path: '/api/chats?q=dentist' },
      { name: 'a word in every message', path: '/api/chats?q=plan' },
      {
        name: 'common word, archived',
        path: '/api/chats?q=dentist&archived=true',
      },
      {
        // A reply just ended in some chat, as ChatReplyService ends one: its two messages stored, then
        // handed over (TURN_STORED) just before `reply-ended`. The search must find the reply's words.
        name: 'just after a reply',
        path: '/api/chats?q=dentist',
        before: async () => {
          const chatId = chats[(round * 37) % CHATS]._id;
          const at = new Date();
          const turn = (['user', 'assistant'] as const).map((role, k) =>
            messageDoc({
              chatId,
              role,
              content: `${text(round * 2 + k, 300)} replyword${round}`,
              at,
            }),
          );
          await db.collection('messages').insertMany(turn);
          const messageIds = turn.map((m) => m._id.toHexString());
          const base = { chatId: chatId.toHexString(), messageIds };
          events.emit('chats.changed', {
            ...base,
            change: 'reply-started',
            at: at.toISOString(),
          });
          emitter.emit(TURN_STORED, { chatId: base.chatId, messages: turn });
          events.emit('chats.changed', {
            ...base,
            change: 'reply-ended',
            at: at.toISOString(),
          });
          lastReply = { chatId: base.chatId, word: `replyword${round}` };
        },
      },
    ].map((row) => ({ target: SEARCH_TARGET_MS, ...row }));
    console.log(
      `Chat search: ${CHATS} chats, ${MESSAGES} messages, ${ROUNDS} rounds (target: search ${SEARCH_TARGET_MS} ms p95, list ${LIST_TARGET_MS} ms p95)`,
    );
    // The messages came in behind the app's back: read them as after a restore (as at start, after listening).
    const t0 = performance.now();
    await events.emitAndWait('backup.restored', {
      at: new Date().toISOString(),
    });
    await api.app.get(ChatSearchIndex).chatsMentioning('first-search');
    console.log(
      `  reading every message into the index (in the background after listening): ${(performance.now() - t0).toFixed(0)} ms`,
    );
    // The restore also has the memory index read every message again, in this process: measured are the
    // searches, not that (memory.bench's), so they start once it is done and the process is idle.
    await api.app.get(MemoryIndex).whenReady();
    console.log(
      `  the process idle after the restore's other work: ${(await settled()).toFixed(0)} ms`,
    );
    let failed = false;
    for (const row of rows) {
      const times: number[] = [];
      let count = 0;
      // Only while the requests run: a row's set-up (a reply's messages stored) is not the search's cost.
      let spentUs = 0;
      for (let r = 0; r < ROUNDS; r++) {
        round++;
        await row.before?.();
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const list = await api.call<unknown[]>('GET', row.path);
        times.push(performance.now() - t0);
        const spent = process.cpuUsage(cpu);
        spentUs += spent.user + spent.system;
        count = list.length;
      }
      const p50 = percentile(times, 0.5);
      const p95 = percentile(times, 0.95);
      const ok = p95 <= row.target;
      failed ||= !ok;
      console.log(
        `  ${row.name.padEnd(28)} ${String(count).padStart(4)} chats  p50 ${p50.toFixed(0).padStart(5)} ms  p95 ${p95.toFixed(0).padStart(5)} ms  API CPU ${(spentUs / 1000 / ROUNDS).toFixed(1).padStart(5)} ms  ${ok ? 'ok' : `MISS (goal ${row.target} ms)`}`,
      );
    }
    // A reply's words are found at once (from the turn handed over, or a read of its chat).
    if (lastReply) {
      const found = await api.call<Array<{ id: string }>>(
        'GET',
        `/api/chats?q=${lastReply.word}`,
      );
      const ok = found.length === 1 && found[0].id === lastReply.chatId;
      failed ||= !ok;
      console.log(
        `  the last reply's words found right after it: ${ok ? 'ok' : 'MISS'}`,
      );
    }
    // A smoke run (npm test) checks that the bench runs, not its goals.
    if (failed && !(process.env['BENCH_SMOKE'] === '1')) process.exitCode = 1;
  } finally {
    await api.close();
    await fake.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
