// Stopping the built server (`node dist/apps/api/main.js`) while things are running: it must end
// within 5 s with exit 0, end its event streams with a last event, store a stopped reply as
// `stopped`, and release the data dir for the next start.
// Run by `nx run api:test-process` (builds the API and the database launcher first).
import { existsSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  main,
  ownerSession,
  startServer,
  tempDir as newTempDir,
} from './support/built-server.mjs';

const tempDir = () => newTempDir('metatron-stop-');

const PASSWORD = 'process test password';
const STOP_WITHIN_MS = 5000;

const start = (dataDir, env = {}) => startServer(dataDir, env);

/** Sends the signal and measures how long the process takes to end. */
async function stop(proc, signal) {
  const sent = Date.now();
  proc.child.kill(signal);
  const timeout = new Promise((done) =>
    setTimeout(() => done('timeout'), STOP_WITHIN_MS + 5000),
  );
  const exit = await Promise.race([proc.exit, timeout]);
  if (exit === 'timeout') proc.child.kill('SIGKILL');
  return { exit, ms: Date.now() - sent };
}

/** The owner's session cookie: sets the owner up on a new data dir, logs in on a used one. */
const session = (url) => ownerSession(url, PASSWORD);

async function api(url, cookie, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { cookie, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Reads a server-sent-events response; `ended` resolves with every event once the server ends it. */
async function openSse(url, cookie, path, init = {}) {
  const res = await fetch(`${url}${path}`, {
    ...init,
    headers: {
      accept: 'text/event-stream',
      cookie,
      'content-type': 'application/json',
    },
  });
  assert.equal(res.status, 200, `${path} answered ${res.status}`);
  const events = [];
  const waiters = [];
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1];
          if (!event) continue; // a comment (keep-alive)
          const data = /^data: ?(.*)$/m.exec(block)?.[1];
          events.push({ event, data: data ? JSON.parse(data) : null });
          waiters.forEach((check) => check());
        }
      }
      return { events, clean: true };
    } catch {
      // The connection was cut instead of ended.
      return { events, clean: false };
    }
  })();
  const next = (name, timeoutMs = 10000) =>
    new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`no "${name}" event on ${path}`)),
        timeoutMs,
      );
      const check = () => {
        const found = events.find((e) => e.event === name);
        if (found) {
          clearTimeout(timer);
          done(found);
        }
      };
      waiters.push(check);
      check();
    });
  return { events, ended, next };
}

/**
 * An OpenAI-compatible upstream that never finishes: `headers` answers with one text chunk and then
 * stays silent, `silent` never answers at all. Counts the requests it holds.
 */
async function startStallingModel(mode) {
  const held = [];
  const server = createHttpServer((req, res) => {
    req.resume();
    held.push(res);
    if (mode === 'silent') return;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = {
      id: 'chatcmpl-stall',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-4.1-mini',
      choices: [
        {
          index: 0,
          delta: { role: 'assistant', content: 'Thinking about it' },
          finish_reason: null,
        },
      ],
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    held,
    async waitForRequest(timeoutMs = 10000) {
      const deadline = Date.now() + timeoutMs;
      while (!held.length) {
        if (Date.now() > deadline)
          throw new Error('the model was never called');
        await new Promise((done) => setTimeout(done, 20));
      }
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** What every stop must give: exit 0 well within 5 s, no forced exit, the lock released. */
function assertStoppedCleanly(t, proc, dataDir, { exit, ms }) {
  t.diagnostic(`stopped in ${ms} ms`);
  assert.deepEqual(
    exit,
    { code: 0, signal: null },
    `exit ${JSON.stringify(exit)} after ${ms} ms; stderr: ${proc.out.stderr}`,
  );
  assert.ok(ms < STOP_WITHIN_MS, `stopped in ${ms} ms`);
  assert.doesNotMatch(proc.out.stdout + proc.out.stderr, /Still stopping/);
  assert.ok(
    !existsSync(join(dataDir, 'metatronos.pid')),
    'the data dir lock is released',
  );
}

/** The stream ended cleanly (not cut), with `shutdown` as its last event. */
async function assertEndedWithShutdown(stream) {
  const { events, clean } = await stream.ended;
  assert.ok(clean, 'the stream was ended, not cut');
  assert.equal(events.at(-1)?.event, 'shutdown', JSON.stringify(events));
  assert.match(events.at(-1).data.at, /^\d{4}-\d\d-\d\dT/);
}

describe('stopping main.js', { timeout: 180000 }, () => {
  it('is built', () =>
    assert.ok(existsSync(main), `${main} is missing: run nx build api`));

  for (const signal of ['SIGTERM', 'SIGINT']) {
    it(`${signal} with open event streams: exits 0 within 5 s, each stream ends with "shutdown", and the next start gets the data dir`, async (t) => {
      const dataDir = tempDir();
      const proc = await start(dataDir);
      const cookie = await session(proc.url);
      const events = await openSse(proc.url, cookie, '/api/events');
      const second = await openSse(proc.url, cookie, '/api/events');
      const qr = await openSse(proc.url, cookie, '/api/whatsapp/qr/stream');
      await events.next('database.status');
      await second.next('database.status');
      await qr.next('status');
      // An idle keep-alive connection must not hold the stop either.
      await fetch(`${proc.url}/api/health`);

      assertStoppedCleanly(t, proc, dataDir, await stop(proc, signal));
      await assertEndedWithShutdown(events);
      await assertEndedWithShutdown(second);
      await assertEndedWithShutdown(qr);

      const next = await start(dataDir);
      assert.ok(await session(next.url), 'the owner is still there');
      assertStoppedCleanly(t, next, dataDir, await stop(next, 'SIGTERM'));
    });
  }

  it('SIGTERM while an upload is half sent: the connection is cut within the grace period, exit 0 within 5 s, no temp file left', async (t) => {
    const dataDir = tempDir();
    const proc = await start(dataDir);
    const cookie = await session(proc.url);
    const uploads = join(dataDir, 'attachments');
    const parts = () =>
      existsSync(uploads)
        ? readdirSync(uploads).filter((name) => name.endsWith('.part'))
        : [];
    const boundary = 'processTestBoundary';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n` +
      'Content-Type: text/plain\r\n\r\n';
    const socket = connect(Number(new URL(proc.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    const closed = new Promise((done) => socket.once('close', done));
    await new Promise((done) => socket.once('connect', done));
    socket.write(
      `POST /api/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n` +
        head +
        'a line of a slow upload\n'.repeat(200),
    );
    const deadline = Date.now() + 10000;
    while (!parts().length && Date.now() < deadline)
      await new Promise((done) => setTimeout(done, 20));
    assert.equal(parts().length, 1, 'the upload is being written');

    assertStoppedCleanly(t, proc, dataDir, await stop(proc, 'SIGTERM'));
    await closed;
    assert.deepEqual(parts(), []);
  });

  it('SIGTERM while a reply streams and the model stalls: exits 0 within 5 s, the reply ends with done {stopped} and is stored as stopped', async (t) => {
    const model = await startStallingModel('headers');
    const dataDir = tempDir();
    try {
      const env = { OPENAI_BASE_URL: model.baseUrl };
      const proc = await start(dataDir, env);
      const cookie = await session(proc.url);
      await api(proc.url, cookie, 'PATCH', '/api/settings', {
        openaiApiKey: 'sk-process-test-0000',
        primaryModel: 'gpt-4.1-mini',
      });
      const chat = await api(proc.url, cookie, 'POST', '/api/chats', {});
      const events = await openSse(proc.url, cookie, '/api/events');
      const reply = await openSse(
        proc.url,
        cookie,
        `/api/chats/${chat.id}/messages`,
        { method: 'POST', body: JSON.stringify({ content: 'Think hard' }) },
      );
      await reply.next('delta');

      assertStoppedCleanly(t, proc, dataDir, await stop(proc, 'SIGTERM'));
      const { events: replyEvents, clean } = await reply.ended;
      assert.ok(clean, 'the reply stream was ended, not cut');
      const last = replyEvents.at(-1);
      assert.equal(last?.event, 'done', JSON.stringify(replyEvents));
      assert.equal(last.data.stopped, true);
      await assertEndedWithShutdown(events);

      const next = await start(dataDir, env);
      const nextCookie = await session(next.url);
      const messages = await api(
        next.url,
        nextCookie,
        'GET',
        `/api/chats/${chat.id}/messages`,
      );
      const answer = messages.find((m) => m.role === 'assistant');
      assert.equal(answer?.status, 'stopped', JSON.stringify(messages));
      assert.equal(answer.content, 'Thinking about it');
      assertStoppedCleanly(t, next, dataDir, await stop(next, 'SIGTERM'));
    } finally {
      model.close();
    }
  });

  it('SIGINT while a job runs and its model call never answers: exits 0 within 5 s and the run is stored as interrupted', async (t) => {
    const model = await startStallingModel('silent');
    const dataDir = tempDir();
    try {
      const env = { OPENAI_BASE_URL: model.baseUrl };
      const proc = await start(dataDir, env);
      const cookie = await session(proc.url);
      await api(proc.url, cookie, 'PATCH', '/api/settings', {
        openaiApiKey: 'sk-process-test-0000',
        primaryModel: 'gpt-4.1-mini',
      });
      const job = await api(proc.url, cookie, 'POST', '/api/cronjobs', {
        name: 'Nightly summary',
        instruction: 'Summarise the day.',
        cronExpression: '0 3 * * *',
      });
      const events = await openSse(proc.url, cookie, '/api/events');
      const run = await api(
        proc.url,
        cookie,
        'POST',
        `/api/cronjobs/${job.id}/run`,
      );
      assert.equal(run.outcome, 'running');
      await model.waitForRequest();

      assertStoppedCleanly(t, proc, dataDir, await stop(proc, 'SIGINT'));
      await assertEndedWithShutdown(events);

      const next = await start(dataDir, env);
      const nextCookie = await session(next.url);
      const [stored] = await api(
        next.url,
        nextCookie,
        'GET',
        `/api/cronjobs/${job.id}/runs`,
      );
      assert.equal(stored.id, run.id);
      assert.equal(stored.outcome, 'error');
      assert.match(stored.error, /interrupted because the server stopped/);
      assertStoppedCleanly(t, next, dataDir, await stop(next, 'SIGTERM'));
    } finally {
      model.close();
    }
  });
});
