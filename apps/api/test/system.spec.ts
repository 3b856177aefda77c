import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { PING_DEADLINE_MS } from '../src/database/database-health.service';
import { DEFAULT_DB_NAME } from '../src/database/database-runtime';
import { openSse } from './support/sse';
import { ferretdbBinary } from './support/test-database';
import { createTestApp, type TestApp } from './support/test-app';

const packageVersion: string = require('../../../package.json').version;

describe('health, system and events', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('GET /api/health pings the database without a session', async () => {
    await t.http().get('/api/health').expect(200, { status: 'ok', db: 'up' });
  });

  it('GET /api/system reports version, uptime, database and data dir', async () => {
    const owner = await t.owner();
    const first = await owner.get('/api/system').expect(200);
    expect(first.body).toEqual({
      version: packageVersion,
      uptimeSeconds: expect.any(Number),
      database: { kind: 'embedded', status: 'up' },
      dataDir: t.config.dataDir,
    });
    t.clock.advance(90_000);
    const later = await owner.get('/api/system').expect(200);
    expect(later.body.uptimeSeconds - first.body.uptimeSeconds).toBe(90);
  });

  it('GET /api/events streams the database status first, as a named SSE event', async () => {
    const { url, cookie } = await t.serve();

    const refused = await fetch(`${url}/api/events`);
    expect(refused.status).toBe(401);

    const stream = await openSse(`${url}/api/events`, { Cookie: cookie });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const first = await stream.next();
      expect(first).toEqual({
        event: 'database.status',
        data: { status: 'up', at: expect.any(String) },
      });
    } finally {
      stream.close();
    }
  });

  it('announces a logout on the event stream, so other open consoles can re-check their session', async () => {
    const { url, cookie } = await t.serve();
    const watcher = await t.serve();
    const stream = await openSse(`${url}/api/events`, {
      Cookie: watcher.cookie,
    });
    try {
      await stream.next((e) => e.event === 'database.status');
      const res = await fetch(`${url}/api/auth/logout`, {
        method: 'POST',
        headers: { Cookie: cookie },
      });
      expect(res.status).toBe(204);
      const event = await stream.next((e) => e.event === 'auth.logged_out');
      expect(event.data).toEqual({ at: expect.any(String) });
    } finally {
      stream.close();
    }
  });
});

describe('when the embedded database dies', () => {
  let dataDir: string;
  let database: EmbeddedDatabase;
  let t: TestApp;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'metatron-dying-db-'));
    database = await EmbeddedDatabase.start({
      binPath: ferretdbBinary(),
      dataDir,
    });
    // One restart, after 3 s: long enough to see the outage, short enough to see the recovery.
    t = await createTestApp({
      database: {
        kind: 'embedded',
        uri: database.uri,
        dbName: DEFAULT_DB_NAME,
        embedded: database,
        restartDelaysMs: [3000],
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps reporting the database up while a ping is only slow (the server stalls, then answers)', async () => {
    const { url, cookie } = await t.serve();
    const stream = await openSse(`${url}/api/events`, { Cookie: cookie });
    const statuses: string[] = [];
    try {
      await stream.next((e) => e.event === 'database.status');
      const watching = stream
        .next((e) => e.event === 'database.status')
        .then((e) => statuses.push((e.data as { status: string }).status))
        .catch(() => undefined);
      // Stalled well past the check's answer time (1.5 s) but alive: a slow database, not a dead one.
      process.kill(database.pid as number, 'SIGSTOP');
      try {
        const started = Date.now();
        await t
          .http()
          .get('/api/health')
          .expect(200, { status: 'ok', db: 'up' });
        // Answered at the check's 1.5 s, far under the 15 s a hanging ping would take.
        expect(Date.now() - started).toBeLessThan(PING_DEADLINE_MS - 5_000);
        await new Promise((done) => setTimeout(done, 1500));
      } finally {
        process.kill(database.pid as number, 'SIGCONT');
      }
      await t.http().get('/api/health').expect(200, { status: 'ok', db: 'up' });
      void watching;
      expect(statuses).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('turns health to 503, answers 503 at once instead of hanging, then restarts it and comes back', async () => {
    const { url, cookie } = await t.serve();
    const owner = await t.owner();
    const stream = await openSse(`${url}/api/events`, { Cookie: cookie });
    try {
      await stream.next((e) => e.event === 'database.status');
      process.kill(database.pid as number, 'SIGKILL');

      const down = await stream.next((e) => e.event === 'database.status');
      expect(down.data).toMatchObject({
        status: 'down',
        reason: expect.stringContaining('signal SIGKILL'),
      });

      await t
        .http()
        .get('/api/health')
        .expect(503, { status: 'error', db: 'down' });
      const started = Date.now();
      const res = await t.http().get('/api/auth/status').expect(503);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(res.body).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        message:
          'The database is unavailable. Check the server log; restarting MetatronOS usually helps.',
      });
      await owner.get('/api/system').expect(503);

      const up = await stream.next(
        (e) => e.event === 'database.status',
        10_000,
      );
      expect(up.data).toMatchObject({ status: 'up' });
      await t.http().get('/api/health').expect(200, { status: 'ok', db: 'up' });
      // Same data: the owner and the session written before the crash are still there.
      const info = await owner.get('/api/system').expect(200);
      expect(info.body.database).toEqual({ kind: 'embedded', status: 'up' });
    } finally {
      stream.close();
    }
  });

  it('gives up when the restarted database dies again within a minute, and stays down', async () => {
    process.kill(database.pid as number, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(database.running).toBe(false);
    await t
      .http()
      .get('/api/health')
      .expect(503, { status: 'error', db: 'down' });
  });
});
