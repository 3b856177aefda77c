// Data growth (issue 19 A), on the built server (dist/apps/api/main.js, its own process, as in production)
// and its embedded FerretDB: 1k, 10k and 100k chat messages over 200 chats, plus one WhatsApp message per
// five chat messages (20k at 100k) from 200 contacts, inserted straight into the database (the address from
// the server's start line). At each size: the median latency over HTTP of the routes whose cost used to
// grow with everything ever stored, and the API process's RSS while serving them, against the targets.
// `npm run bench` builds the server first; alone, build it with `npx nx run api:build`.
// Sizes: BENCH_SIZES=1000,10000 (default 1000,10000,100000). Rounds per route: BENCH_ROUNDS (default 15).
// Alone: TS_NODE_PROJECT=apps/api/tsconfig.app.json TS_NODE_TRANSPILE_ONLY=true
//   node -r ts-node/register -r ./tools/bench/register-paths.cjs tools/bench/data-growth.bench.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, ObjectId, type Db } from 'mongodb';

const SIZES = (process.env['BENCH_SIZES'] ?? '1000,10000,100000')
  .split(',')
  .map(Number);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15);
const CHATS = 200;
const CONTACTS = 200;
const OWN_PHONE = '15550000000';
const BATCH = 1000;
const RSS_LIMIT_MB = 300;

interface Route {
  name: string;
  targetMs: number;
  path: () => string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function contactPhone(index: number): string {
  return `4915${String(1_000_000 + index).padStart(8, '0')}`;
}

/** Resident set size of a process in MB (Linux), or NaN elsewhere. */
function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The embedded database launcher started by the server (Linux), or NaN. */
function launcherPid(serverPid: number): number {
  try {
    for (const task of readdirSync(`/proc/${serverPid}/task`))
      for (const child of readFileSync(
        `/proc/${serverPid}/task/${task}/children`,
        'utf8',
      )
        .trim()
        .split(/\s+/)
        .filter(Boolean))
        if (readFileSync(`/proc/${child}/comm`, 'utf8').startsWith('ferretdb'))
          return Number(child);
  } catch {
    // Not Linux: no figure.
  }
  return Number.NaN;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Server {
  child: ChildProcess;
  url: string;
  cookie: string;
  databaseUri: string;
  dataDir: string;
}

/** Starts dist/apps/api/main.js on a fresh data dir and sets up the owner. */
async function startServer(): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/apps/api/main.js'], {
    cwd: process.cwd(),
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  const databaseUri = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`the server exited (${code}): ${log}`)),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const found = /Embedded database ready at (mongodb:\/\/\S+)/.exec(log);
      if (found && /MetatronOS is ready/.test(log)) resolve(found[1]);
    });
  });
  child.stdout?.resume();
  const url = `http://127.0.0.1:${port}`;
  const setup = await fetch(`${url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: 'bench password 1' }),
  });
  if (!setup.ok)
    throw new Error(`setup: ${setup.status} ${await setup.text()}`);
  const cookie = String(setup.headers.get('set-cookie')).split(';')[0];
  return { child, url, cookie, databaseUri, dataDir };
}

async function get(server: Server, path: string): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    headers: { cookie: server.cookie },
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${body}`);
}

/** Adds chat messages up to `total` (spread over the chats, in time order) and WhatsApp messages up to total/5. */
async function growTo(
  connection: Db,
  chatIds: ObjectId[],
  from: number,
  total: number,
): Promise<void> {
  const messages = connection.collection('messages');
  const whatsapp = connection.collection('whatsapp_messages');
  const start = Date.UTC(2025, 0, 1);
  for (let first = from; first < total; first += BATCH) {
    const docs = [];
    for (let i = first; i < Math.min(total, first + BATCH); i++) {
      const at = new Date(start + i * 60_000);
      docs.push({
        chatId: chatIds[i % chatIds.length],
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `Message ${i}: ${'lorem ipsum dolor sit amet '.repeat(6)}`,
        status: 'complete',
        error: null,
        model: i % 2 === 0 ? null : 'gpt-4.1-mini',
        usage: i % 2 === 0 ? null : { inputTokens: 900, outputTokens: 120 },
        createdAt: at,
        updatedAt: at,
      });
    }
    await messages.insertMany(docs, { ordered: false });
  }
  const wa = [];
  for (let i = Math.floor(from / 5); i < Math.floor(total / 5); i++) {
    const phone = contactPhone(i % CONTACTS);
    const fromMe = i % 3 === 0;
    const jid = `${phone}@s.whatsapp.net`;
    const own = `${OWN_PHONE}@s.whatsapp.net`;
    wa.push({
      _id: `3EB0${String(i).padStart(16, '0')}`,
      from: fromMe ? own : jid,
      fromName: fromMe ? null : `Contact ${i % CONTACTS}`,
      to: fromMe ? jid : own,
      body: `WhatsApp message ${i}`,
      timestamp: start + i * 300_000,
      fromMe,
      isGroup: false,
      phone,
      receivedAt: new Date(start + i * 300_000),
      processing: 'done',
    });
  }
  for (let i = 0; i < wa.length; i += BATCH)
    await whatsapp.insertMany(wa.slice(i, i + BATCH) as never[], {
      ordered: false,
    });
}

async function measure(
  server: Server,
  route: Route,
): Promise<{ medianMs: number }> {
  const times: number[] = [];
  // One warm-up call, then the timed rounds.
  for (let round = 0; round <= ROUNDS; round++) {
    const began = performance.now();
    await get(server, route.path());
    if (round > 0) times.push(performance.now() - began);
  }
  return { medianMs: median(times) };
}

async function main(): Promise<void> {
  const server = await startServer();
  const client = await new MongoClient(server.databaseUri).connect();
  try {
    const connection = client.db('metatronos');
    const chats = connection.collection('chats');
    const chatIds: ObjectId[] = [];
    const now = Date.UTC(2026, 0, 1);
    const chatDocs = Array.from({ length: CHATS }, (_, i) => {
      const _id = new ObjectId();
      chatIds.push(_id);
      return {
        _id,
        title: `Chat ${i}`,
        autoTitle: false,
        kind: 'chat',
        createdAt: new Date(now - i * 3_600_000),
        updatedAt: new Date(now - i * 3_600_000),
      };
    });
    await chats.insertMany(chatDocs);
    let turn = 0;
    const next = <T>(list: T[]): T => list[turn++ % list.length];
    const routes: Route[] = [
      {
        name: 'chat page (50 newest messages)',
        targetMs: 30,
        path: () => `/api/chats/${next(chatIds).toHexString()}/messages`,
      },
      { name: 'chat list', targetMs: 50, path: () => '/api/chats' },
      {
        name: 'Data: collections',
        targetMs: 200,
        path: () => '/api/data/collections',
      },
      {
        name: 'Data: messages, first page',
        targetMs: 200,
        path: () => '/api/data/collections/messages/documents?limit=50',
      },
      {
        name: 'Data: messages, page at skip 1000',
        targetMs: 200,
        path: () =>
          '/api/data/collections/messages/documents?limit=50&skip=1000',
      },
      {
        name: 'WhatsApp messages by contact',
        targetMs: 50,
        path: () =>
          `/api/whatsapp/messages?contact=${contactPhone(turn++ % CONTACTS)}&limit=50`,
      },
    ];
    const apiPid = server.child.pid as number;
    const dbPid = launcherPid(apiPid);
    let stored = 0;
    const rows: string[] = [];
    let failed = false;
    for (const size of SIZES) {
      const began = performance.now();
      await growTo(connection, chatIds, stored, size);
      const seedSeconds = (performance.now() - began) / 1000;
      stored = size;
      console.log(
        `\n${size.toLocaleString('en')} messages over ${CHATS} chats, ${Math.floor(size / 5).toLocaleString('en')} WhatsApp messages (seeded in ${seedSeconds.toFixed(1)} s)`,
      );
      let peakRss = rssOf(apiPid);
      for (const route of routes) {
        const { medianMs } = await measure(server, route);
        peakRss = Math.max(peakRss, rssOf(apiPid));
        const ok = medianMs <= route.targetMs;
        if (size >= 100_000 && !ok) failed = true;
        const line = `  ${route.name.padEnd(36)} ${medianMs.toFixed(1).padStart(8)} ms   target ≤ ${route.targetMs} ms ${ok ? 'ok' : 'MISSED'}`;
        console.log(line);
        rows.push(`${size}\t${route.name}\t${medianMs.toFixed(1)}`);
      }
      const rssOk = peakRss <= RSS_LIMIT_MB;
      if (size >= 100_000 && !rssOk) failed = true;
      console.log(
        `  ${'API process RSS (peak while serving)'.padEnd(36)} ${peakRss.toFixed(0).padStart(8)} MB   target ≤ ${RSS_LIMIT_MB} MB ${rssOk ? 'ok' : 'MISSED'}`,
      );
      if (Number.isFinite(dbPid))
        console.log(
          `  ${'database process RSS'.padEnd(36)} ${rssOf(dbPid).toFixed(0).padStart(8)} MB`,
        );
    }
    if (failed && !(process.env['BENCH_SMOKE'] === '1')) process.exitCode = 1;
  } finally {
    await client.close();
    server.child.kill('SIGTERM');
    await new Promise((done) => server.child.once('exit', done));
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
