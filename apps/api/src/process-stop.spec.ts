import {
  Agent,
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProcessStop, type StopTargets } from './process-stop';

const TIMINGS = {
  hardExitMs: 800,
  connectionGraceMs: 300,
  databaseGraceMs: 50,
};
/**
 * For a case whose point is that something happens before a limit: the limit far away, so a
 * busy machine's late timers cannot reach it, and the case still ends as soon as it passes.
 */
const FAR = 10_000;

/** A real HTTP server on loopback: `/stream` answers an event stream that stays open until ended. */
async function startServer() {
  const streams: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: hello\ndata: {}\n\n');
    streams.push(res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, streams, port: (server.address() as AddressInfo).port };
}

/** Opens `/stream` on a keep-alive connection; resolves once the first event came, with when the socket closed. */
function openStream(port: number) {
  return new Promise<{ closed: Promise<number>; body: () => string }>(
    (resolve, reject) => {
      let body = '';
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/stream',
        agent: new Agent({ keepAlive: true }),
      });
      req.on('error', reject);
      req.on('socket', (socket) => {
        const closed = new Promise<number>((done) =>
          socket.once('close', () => done(Date.now())),
        );
        req.on('response', (res) => {
          res.on('error', () => undefined);
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
            resolve({ closed, body: () => body });
          });
        });
      });
      req.end();
    },
  );
}

function targets(server: Server, closeApp: () => Promise<void>) {
  const calls: string[] = [];
  const exits: Array<{ code: number; at: number }> = [];
  const t: StopTargets = {
    server: () => server,
    closeApp,
    stopDatabase: async (graceMs) => void calls.push(`db:${graceMs}`),
    releaseLock: () => void calls.push('lock'),
    exit: (code) => void exits.push({ code, at: Date.now() }),
    log: (message) => void calls.push(`log:${message}`),
    error: (message) => void calls.push(`error:${message}`),
  };
  return { t, calls, exits };
}

/** How many times the stop swept the server's idle connections within the next `ms`. */
async function idleSweepsAfter(server: Server, ms: number): Promise<number> {
  let sweeps = 0;
  const sweep = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    sweeps++;
    sweep();
  };
  await new Promise((done) => setTimeout(done, ms));
  server.closeIdleConnections = sweep;
  return sweeps;
}

const until = async (check: () => boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((done) => setTimeout(done, 10));
  }
};

/** A close that never ends (a hook that hangs). */
const hangs = () => new Promise<void>(() => undefined);

/** As Nest's app.close() does last: waits for the HTTP server to close, which waits for every connection. */
const closeLikeNest = (server: Server) => () =>
  new Promise<void>((done) => server.close(() => done()));

describe('ProcessStop', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  it('closes a connection as soon as its stream ended, then stops the database, releases the lock and exits 0', async () => {
    const started = await startServer();
    server = started.server;
    const client = await openStream(started.port);
    const { t, calls, exits } = targets(server, async () => {
      // The app's hooks end the event streams with their last event, after the server stopped
      // listening; closing is done once the server has no connection left.
      await new Promise((done) => setTimeout(done, 20));
      started.streams.forEach((res) =>
        res.end('event: shutdown\ndata: {}\n\n'),
      );
      await new Promise((done) => started.server.once('close', done));
    });
    const timings = { ...TIMINGS, connectionGraceMs: FAR, hardExitMs: 2 * FAR };
    const stop = new ProcessStop(t, timings);
    const begun = Date.now();
    stop.onSignal('SIGTERM');
    await until(() => exits.length > 0);

    expect(exits).toEqual([{ code: 0, at: expect.any(Number) }]);
    // Well before the grace period: the ended stream's keep-alive connection was closed at once.
    expect((await client.closed) - begun).toBeLessThan(FAR / 2);
    expect(client.body()).toContain('event: shutdown');
    expect(calls).toEqual([
      'log:SIGTERM received, shutting down',
      `db:${TIMINGS.databaseGraceMs}`,
      'lock',
    ]);
  });

  it('cuts a connection that never ends after the grace period', async () => {
    const started = await startServer();
    server = started.server;
    const client = await openStream(started.port);
    const { t, exits } = targets(server, closeLikeNest(server));
    // The hard exit far away: the cut, not the guard, must end this stop.
    const timings = { ...TIMINGS, hardExitMs: FAR };
    const begun = Date.now();
    void new ProcessStop(t, timings).stop(0);
    await until(() => exits.length > 0);

    const cutAfter = (await client.closed) - begun;
    expect(cutAfter).toBeGreaterThanOrEqual(timings.connectionGraceMs - 20);
    expect(cutAfter).toBeLessThan(FAR / 2);
    expect(exits.map((exit) => exit.code)).toEqual([0]);
  });

  it('exits 1 after hardExitMs when closing hangs, still releasing the lock and stopping the database', async () => {
    const started = await startServer();
    server = started.server;
    const { t, calls, exits } = targets(server, hangs);
    const begun = Date.now();
    void new ProcessStop(t, TIMINGS).stop(0);
    await until(() => exits.length > 0);

    expect(exits[0].code).toBe(1);
    expect(exits[0].at - begun).toBeGreaterThanOrEqual(TIMINGS.hardExitMs - 20);
    // Late timers on a busy machine are allowed for; a guard that waited for something else is not.
    expect(exits[0].at - begun).toBeLessThan(TIMINGS.hardExitMs + 3_000);
    expect(calls).toEqual([
      'error:Still stopping after 0.8 s: exiting without waiting for the rest',
      'db:0',
      'lock',
    ]);
    // The stop's own timers end with it: no more sweeps of idle connections after the exit.
    expect(await idleSweepsAfter(server, 300)).toBe(0);
  });

  it('exits 1 at once on a second signal', async () => {
    const started = await startServer();
    server = started.server;
    const { t, calls, exits } = targets(server, hangs);
    const stop = new ProcessStop(t, TIMINGS);
    stop.onSignal('SIGINT');
    stop.onSignal('SIGINT');

    expect(exits.map((exit) => exit.code)).toEqual([1]);
    expect(calls).toEqual([
      'log:SIGINT received, shutting down',
      'error:SIGINT received again, exiting now',
      'db:0',
      'lock',
    ]);
    // The guard does not exit a second time.
    await new Promise((done) => setTimeout(done, TIMINGS.hardExitMs + 100));
    expect(exits).toHaveLength(1);
    expect(await idleSweepsAfter(server, 300)).toBe(0);
  });
});
