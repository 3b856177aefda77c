// Measured on 2 cores (embedded FerretDB with tools/ferretdb/patches): 1,000 messages from 50 contacts in
// ~15 s, 0 lost, 0 answered twice, 13× faster than a serial queue (1,000 × 200 ms) and 15× faster than the
// measured one. Before the FerretDB `_id` index patch and the write cuts it took 193 s (see the issue 5 note).
// Since then the turn grew to ~16 database commands per auto-replied message; issue 30 brought it to
// ~7.9 and then ~5.1 (the contact's initial taint goes in with the reply's insert, delivery marks and
// the chat's activity time are group-committed, a sent reply's last writes no longer hold up the
// contact's next message, at most 16 connections to the embedded FerretDB). What bounds it is FerretDB's
// single SQLite writer, not the API's CPU: measured alternately with main at load 1.6-6.4, 9.1-16.5x
// (main 6.4-13.0x) the computed serial queue, about 15-21 ms of CPU per message (API + fake provider
// ~7-10, FerretDB ~9-11; main ~20-26). Stop 44's launcher (an `update` command's writes in one
// transaction, logging that formats only what it writes) gave 18.2-19.2x, FerretDB ~7.3-7.6 ms a message,
// against 14.3-15.5x and 9.5-10.0 ms for the launcher before it (the app the same). On a machine
// shared at load 10+ every figure drops (CPU per message rises with the load). The serial reference is
// the same pipeline with one contact (one queue); the load runs at most AUTO_REPLY_CONCURRENCY
// (default 32) contacts' turns at once.
// Smaller run: BENCH_CONTACTS=10 BENCH_PER_CONTACT=10. Exits 1 when a message is lost or answered twice, or
// the speed-up is under 10×.
// WhatsApp auto-reply figure (issue 5), on the real Nest app and embedded FerretDB, with the fake WhatsApp
// socket and the fake provider upstream answering each reply after 200 ms:
//   1,000 inbound messages from 50 contacts (20 each, interleaved) → total time until every message is
//   handled, messages lost (no reply sent) and answered twice, and the ratio to a serial queue (the seed's
//   one-at-a-time AsyncQueue: 1,000 × 200 ms, and measured: 20 messages from one contact, scaled to 1,000).
// Rate limits and the bot-loop guard are OFF here (30 replies/min would make 1,000 replies take 33 min by design);
// the figure measures the queueing, claiming and turn pipeline.
// Alone: TS_NODE_PROJECT=apps/api/tsconfig.app.json TS_NODE_TRANSPILE_ONLY=true
//   node -r ts-node/register -r ./tools/bench/register-paths.cjs tools/bench/whatsapp.bench.ts
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { WhatsAppAutoReplyService } from '../../apps/api/src/whatsapp/auto-reply/whatsapp-auto-reply.service';
import { WhatsAppService } from '../../apps/api/src/whatsapp/gateway/whatsapp.service';
import { incoming } from '../../apps/api/test/support/fake-whatsapp-socket';
import {
  startFakeLlmServer,
  type FakeRecordedRequest,
} from '../fake-llm/fake-llm-server';
import {
  startBenchAppWithWhatsApp,
  type BenchAppWithWhatsApp as Api,
} from './in-process-app';

const CONTACTS = Number(process.env['BENCH_CONTACTS'] ?? 50);
const PER_CONTACT = Number(process.env['BENCH_PER_CONTACT'] ?? 20);
const LLM_MS = 200;
const SERIAL_SAMPLE = process.env['BENCH_SMOKE'] === '1' ? 3 : 20;

function lastUser(request: FakeRecordedRequest): string {
  const messages = (request.body?.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>;
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : '';
}

/** User + system CPU of a process so far, in ms (clock ticks are 10 ms on Linux). */
function cpuMs(pid: number | 'self'): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The embedded database's process (a child of this one), or null on MONGODB_URI. */
function databasePid(): number | null {
  try {
    return Number(
      execFileSync('pgrep', ['-P', String(process.pid), '-f', 'ferretdb'])
        .toString()
        .trim()
        .split('\n')[0],
    );
  } catch {
    return null;
  }
}

const phoneOf = (c: number) => `1415600${String(c).padStart(4, '0')}`;

/** Sends `count` messages per contact (interleaved) and waits until every one is handled; returns ms. */
async function burst(
  api: Api,
  prefix: string,
  contacts: number,
  count: number,
): Promise<{ ms: number; texts: string[] }> {
  const now = Date.now();
  const messages = [];
  for (let i = 0; i < count; i++) {
    for (let c = 0; c < contacts; c++) {
      messages.push(
        incoming({
          id: `${prefix}-${c}-${i}`,
          from: `${phoneOf(c)}@s.whatsapp.net`,
          text: `${prefix} ${c}/${i}`,
          at: now + i,
        }),
      );
    }
  }
  const started = performance.now();
  for (let i = 0; i < messages.length; i += 100)
    api.socket.upsert(messages.slice(i, i + 100));
  await api.app.get(WhatsAppService).settled();
  const db = api.app
    .get<Connection>(getConnectionToken())
    .collection('whatsapp_messages');
  const service = api.app.get(WhatsAppAutoReplyService);
  for (;;) {
    await service.idle();
    const open = await db.countDocuments({
      _id: { $regex: `^${prefix}-` } as never,
      processing: { $in: ['pending', 'working'] },
    });
    if (open === 0) break;
    await new Promise((done) => setTimeout(done, 20));
  }
  const ms = performance.now() - started;
  return {
    ms,
    texts: messages.map(
      (m) => `re: ${(m.message as { conversation: string }).conversation}`,
    ),
  };
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  fake.openai.fallback = (request) => ({
    text: [`re: ${lastUser(request)}`],
    chunkDelayMs: LLM_MS,
  });
  const api = await startBenchAppWithWhatsApp(fake);
  try {
    for (let c = 0; c < CONTACTS; c++) {
      await api.call('POST', '/api/whatsapp/permissions', {
        phoneNumber: phoneOf(c),
        displayName: `Contact ${c}`,
        canRead: true,
        canReply: true,
      });
    }
    // Serial reference: one contact's queue is serial, exactly like the seed's single queue.
    const serial = await burst(api, 'serial', 1, SERIAL_SAMPLE);
    const serialPerMessage = serial.ms / SERIAL_SAMPLE;
    api.socket.sent.length = 0;

    const total = CONTACTS * PER_CONTACT;
    const dbPid = databasePid();
    const cpuBefore = { app: cpuMs('self'), db: dbPid ? cpuMs(dbPid) : 0 };
    const run = await burst(api, 'load', CONTACTS, PER_CONTACT);
    // CPU per message: this process (the API and the fake provider) and the database's.
    const cpu = {
      app: (cpuMs('self') - cpuBefore.app) / total,
      db: dbPid ? (cpuMs(dbPid) - cpuBefore.db) / total : null,
    };
    const counts = new Map<string, number>();
    for (const s of api.socket.sent)
      counts.set(s.content.text, (counts.get(s.content.text) ?? 0) + 1);
    const lost = run.texts.filter((text) => !counts.has(text)).length;
    const twice = [...counts.values()].filter((n) => n > 1).length;
    const computedSerialMs = total * LLM_MS;
    const measuredSerialMs = total * serialPerMessage;
    const result = {
      messages: total,
      contacts: CONTACTS,
      llmDelayMs: LLM_MS,
      totalMs: Math.round(run.ms),
      perMessageMs: +(run.ms / total).toFixed(1),
      repliesSent: api.socket.sent.length,
      lost,
      answeredTwice: twice,
      llmRequests: fake.openai.requests.length - SERIAL_SAMPLE,
      serialComputedMs: computedSerialMs,
      serialMeasuredPerMessageMs: +serialPerMessage.toFixed(1),
      serialMeasuredMs: Math.round(measuredSerialMs),
      speedupVsComputed: +(computedSerialMs / run.ms).toFixed(1),
      speedupVsMeasured: +(measuredSerialMs / run.ms).toFixed(1),
      cpuPerMessageMs: {
        apiAndFakeProvider: +cpu.app.toFixed(1),
        database: cpu.db === null ? null : +cpu.db.toFixed(1),
      },
      loadAverage: +loadavg()[0].toFixed(1),
      rateLimits: 'off (bench)',
    };
    console.log(JSON.stringify(result, null, 2));
    // A lost message is named with the state and reason it ended in (a failed turn says why).
    const lostBodies = run.texts
      .filter((text) => !counts.has(text))
      .map((text) => text.slice('re: '.length));
    if (lostBodies.length)
      console.log(
        'lost:',
        JSON.stringify(
          await api.app
            .get<Connection>(getConnectionToken())
            .collection('whatsapp_messages')
            .find(
              { body: { $in: lostBodies.slice(0, 10) } },
              { projection: { body: 1, processing: 1, reason: 1 } },
            )
            .toArray(),
        ),
      );
    if (
      lost !== 0 ||
      twice !== 0 ||
      (result.speedupVsComputed < 10 && !(process.env['BENCH_SMOKE'] === '1'))
    )
      process.exitCode = 1;
  } finally {
    await api.close();
    await fake.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
