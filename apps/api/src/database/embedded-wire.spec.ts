import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BSON,
  MongoNetworkError,
  MongoServerError,
  type Document,
} from 'mongodb';
import {
  EmbeddedWire,
  embeddedWireAddress,
  type WireCommandEvents,
} from './embedded-wire';

describe('embeddedWireAddress (the embedded database only: no credentials, options or other hosts)', () => {
  it.each([
    [
      'mongodb://%2Ftmp%2Fm%2Frun%2Fferretdb.sock/',
      { path: '/tmp/m/run/ferretdb.sock' },
    ],
    [
      'mongodb://%2Ftmp%2Fm%2Fferretdb.sock/metatronos',
      { path: '/tmp/m/ferretdb.sock' },
    ],
    ['mongodb://127.0.0.1:27017/', { host: '127.0.0.1', port: 27017 }],
    [
      'mongodb://127.0.0.1:40123/metatronos',
      { host: '127.0.0.1', port: 40123 },
    ],
    ['mongodb://127.0.0.1:99999/', undefined],
    ['mongodb://127.0.0.1:0/', undefined],
    ['mongodb://user:secret@127.0.0.1:27017/', undefined],
    ['mongodb://%2Ftmp%2Fm%2Fferretdb.sock/?tls=true', undefined],
    ['mongodb://127.0.0.1:27017/?replicaSet=rs0', undefined],
    ['mongodb://localhost:27017/', undefined],
    ['mongodb://10.0.0.5:27017/', undefined],
    ['mongodb://127.0.0.1:27017,127.0.0.1:27018/', undefined],
    ['mongodb+srv://cluster.example.net/', undefined],
    ['mongodb://%2Ftmp%2Fm%2Fsocket/', undefined],
    ['mongodb://relative.sock/', undefined],
  ])('%s', (uri, expected) => {
    expect(embeddedWireAddress(uri)).toEqual(expected);
  });
});

/** A server that speaks OP_MSG on a Unix socket, answering as each test says (or not at all). */
class FakeWireServer {
  readonly path: string;
  readonly received: Document[] = [];
  readonly sockets: Socket[] = [];
  /** The reply to a command; null sends nothing (the command waits). */
  answer: (command: Document) => Document | null = () => ({ ok: 1 });
  /** Holds replies back and sends them in this order of request ids (see `flushHeld`). */
  hold = false;
  private readonly held: {
    socket: Socket;
    requestId: number;
    reply: Document;
  }[] = [];
  private readonly server: Server;
  private readonly dir = mkdtempSync(join(tmpdir(), 'wire-spec-'));

  constructor() {
    this.path = join(this.dir, 'fake.sock');
    this.server = createServer((socket) => {
      this.sockets.push(socket);
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
        while (buffer.length >= 4 && buffer.readInt32LE(0) <= buffer.length) {
          const length = buffer.readInt32LE(0);
          const message = buffer.subarray(0, length);
          buffer = buffer.subarray(length);
          const requestId = message.readInt32LE(4);
          const command = BSON.deserialize(message.subarray(21));
          this.received.push(command);
          const reply = this.answer(command);
          if (!reply) continue;
          if (this.hold) this.held.push({ socket, requestId, reply });
          else socket.write(replyMessage(requestId, reply));
        }
      });
      socket.on('error', () => undefined);
    });
  }

  listen(): Promise<void> {
    return new Promise((done) => this.server.listen(this.path, done));
  }

  /** Sends the held replies, last first, split into pieces of `pieceBytes` written one by one. */
  async flushHeld(pieceBytes: number): Promise<void> {
    const bytes = Buffer.concat(
      this.held
        .reverse()
        .map(({ requestId, reply }) => replyMessage(requestId, reply)),
    );
    const socket = this.held[0].socket;
    this.held.length = 0;
    for (let at = 0; at < bytes.length; at += pieceBytes) {
      socket.write(bytes.subarray(at, at + pieceBytes));
      await new Promise((done) => setImmediate(done));
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((done) => this.server.close(done));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function replyMessage(responseTo: number, reply: Document): Buffer {
  const body = BSON.serialize(reply);
  const message = Buffer.alloc(21 + body.length);
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(999, 4);
  message.writeInt32LE(responseTo, 8);
  message.writeInt32LE(2013, 12);
  message.set(body, 21);
  return message;
}

describe('EmbeddedWire (OP_MSG on the embedded database socket)', () => {
  let server: FakeWireServer;
  let wire: EmbeddedWire;

  beforeEach(async () => {
    server = new FakeWireServer();
    await server.listen();
  });
  afterEach(async () => {
    wire?.close();
    await server.close();
  });

  it('sends the command with its database and answers the reply document', async () => {
    server.answer = (command) => ({ ok: 1, n: 2, echo: command['insert'] });
    wire = new EmbeddedWire({ path: server.path });
    const reply = await wire.command('metatronos', {
      insert: 'messages',
      documents: [{ _id: 'a', at: new Date(0), missing: undefined }],
    });
    expect(reply).toEqual({ ok: 1, n: 2, echo: 'messages' });
    // As the driver sends it: `$db`, and `undefined` as null.
    expect(server.received).toEqual([
      {
        insert: 'messages',
        documents: [{ _id: 'a', at: new Date(0), missing: null }],
        $db: 'metatronos',
      },
    ]);
  });

  it('matches replies to requests by id, whatever their order and however the bytes are split', async () => {
    server.hold = true;
    server.answer = (command) => ({ ok: 1, n: command['n'] });
    // One connection, so that every reply comes back on it.
    wire = new EmbeddedWire({ path: server.path }, undefined, 1);
    const replies = Array.from({ length: 20 }, (_, n) =>
      wire.command('db', { ping: 1, n }),
    );
    await until(() => server.received.length === 20);
    await server.flushHeld(7);
    expect((await Promise.all(replies)).map((r) => r['n'])).toEqual(
      Array.from({ length: 20 }, (_, n) => n),
    );
  });

  it('spreads commands in flight over its connections', async () => {
    server.answer = () => null;
    wire = new EmbeddedWire({ path: server.path }, undefined, 3);
    const waiting = Array.from({ length: 6 }, () =>
      wire.command('db', { ping: 1 }).catch((error: Error) => error),
    );
    await until(() => server.received.length === 6);
    expect(server.sockets).toHaveLength(3);
    wire.close();
    for (const error of await Promise.all(waiting))
      expect(error).toBeInstanceOf(MongoNetworkError);
  });

  it('answers ok: 0 as a MongoServerError with the code and message', async () => {
    server.answer = () => ({
      ok: 0,
      errmsg: 'no such command: nope',
      code: 59,
      codeName: 'CommandNotFound',
    });
    wire = new EmbeddedWire({ path: server.path });
    const error = await wire.command('db', { nope: 1 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(MongoServerError);
    expect(error).toMatchObject({
      code: 59,
      codeName: 'CommandNotFound',
      message: 'no such command: nope',
    });
  });

  it('fails the commands in flight when the connection drops, and reconnects for the next', async () => {
    server.answer = (command) => (command['wait'] ? null : { ok: 1 });
    wire = new EmbeddedWire({ path: server.path }, undefined, 1);
    const inFlight = wire.command('db', { wait: 1 }).catch((e: Error) => e);
    await until(() => server.received.length === 1);
    server.sockets[0].destroy();
    const error = await inFlight;
    expect(error).toBeInstanceOf(MongoNetworkError);
    expect(await wire.command('db', { ping: 1 })).toEqual({ ok: 1 });
    expect(server.sockets).toHaveLength(2);
  });

  it('fails every command when nothing listens, as a network error', async () => {
    const path = server.path;
    await server.close();
    wire = new EmbeddedWire({ path });
    await expect(wire.command('db', { ping: 1 })).rejects.toBeInstanceOf(
      MongoNetworkError,
    );
    server = new FakeWireServer();
    await server.listen();
  });

  it('drops a connection that sends a message of an impossible length, failing what waited on it', async () => {
    server.answer = () => null;
    wire = new EmbeddedWire({ path: server.path }, undefined, 1);
    const waiting = wire.command('db', { ping: 1 }).catch((e: Error) => e);
    await until(() => server.received.length === 1);
    const garbage = Buffer.alloc(8);
    garbage.writeInt32LE(3, 0);
    server.sockets[0].write(garbage);
    expect(await waiting).toBeInstanceOf(MongoNetworkError);
    server.answer = () => ({ ok: 1 });
    expect(await wire.command('db', { ping: 1 })).toEqual({ ok: 1 });
  });

  it('refuses commands after close', async () => {
    wire = new EmbeddedWire({ path: server.path });
    wire.close();
    await expect(wire.command('db', { ping: 1 })).rejects.toBeInstanceOf(
      MongoNetworkError,
    );
    expect(server.received).toEqual([]);
  });

  it('tells a listener when each command starts and ends, with its reply or error', async () => {
    server.answer = (command) =>
      command['bad'] ? { ok: 0, errmsg: 'bad', code: 2 } : { ok: 1, n: 1 };
    const seen: string[] = [];
    const events: WireCommandEvents = {
      started: ({ requestId, databaseName, command }) =>
        seen.push(
          `start ${requestId} ${databaseName} ${Object.keys(command)[0]}`,
        ),
      ended: ({ requestId, reply, error }) =>
        seen.push(`end ${requestId} ${error ? error.message : reply?.['n']}`),
    };
    wire = new EmbeddedWire({ path: server.path }, events);
    await wire.command('db', { insert: 'x' });
    await wire.command('db', { bad: 1 }).catch(() => undefined);
    expect(seen).toEqual([
      'start 1 db insert',
      'end 1 1',
      'start 2 db bad',
      'end 2 bad',
    ]);
  });

  it('keeps the process alive only while a command is in flight', async () => {
    server.answer = (command) => (command['wait'] ? null : { ok: 1 });
    wire = new EmbeddedWire({ path: server.path }, undefined, 1);
    // Whether the connection's handle holds the event loop open (what `unref` changes).
    const refed = () =>
      (
        wire as unknown as {
          connections: { socket: { _handle: { hasRef(): boolean } } }[];
        }
      ).connections[0].socket._handle.hasRef();
    await wire.command('db', { ping: 1 });
    expect(refed()).toBe(false);
    void wire.command('db', { wait: 1 }).catch(() => undefined);
    expect(refed()).toBe(true);
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++)
    await new Promise((done) => setTimeout(done, 10));
  if (!condition()) throw new Error('condition not met in 5 s');
}
