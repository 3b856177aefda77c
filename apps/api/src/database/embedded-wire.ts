import { connect, type Socket } from 'node:net';
import { BSON, MongoNetworkError, MongoServerError } from 'mongodb';
import type { Document } from 'mongodb';

/** OP_MSG (MongoDB 3.6+): the only opcode sent or read here. */
const OP_MSG = 2013;
/** messageLength, requestID, responseTo, opCode; then OP_MSG's flagBits and section kind 0. */
const HEADER_BYTES = 16;
const BODY_START = HEADER_BYTES + 4 + 1;
/** OP_MSG flagBits: a CRC-32C follows the sections (never asked for here, tolerated if sent). */
const CHECKSUM_PRESENT = 1;
/** Connections to the database: a command in flight on each, the rest queued on the least busy. */
const DEFAULT_CONNECTIONS = 4;
/**
 * The largest command sent in one body section: the server's document limit (16 MiB) and its 16 KiB
 * of room for the command's own fields. The driver sends larger batches as document sequences.
 */
export const MAX_COMMAND_BYTES = 16 * 1024 * 1024 + 16 * 1024;
/** The server's own limit on a message (48 MB); a reply claiming more is a broken stream. */
const MAX_MESSAGE_BYTES = 48_000_000;
/** As the driver serialises a command by default: `undefined` as null, no key checks. */
const SERIALIZE = {
  checkKeys: false,
  ignoreUndefined: false,
  serializeFunctions: false,
} as const;

/** Where the embedded database listens: its Unix socket, or a loopback TCP port. */
export type WireAddress = { path: string } | { host: string; port: number };

/** What a command's start and end look like to a listener of the driver's command events. */
export interface WireCommandEvents {
  started(event: {
    requestId: number;
    databaseName: string;
    command: Document;
  }): void;
  ended(event: { requestId: number; reply?: Document; error?: Error }): void;
}

/** A command larger than one body section holds (`MAX_COMMAND_BYTES`): not sent, for the driver to send. */
export class CommandTooLarge extends Error {
  constructor(bytes: number) {
    super(
      `A command of ${bytes} bytes is larger than one OP_MSG section holds`,
    );
  }
}

interface Pending {
  resolve: (reply: Document) => void;
  reject: (error: Error) => void;
}

/**
 * The embedded database's address from its URI (`mongodb://%2F…%2Fferretdb.sock/` or
 * `mongodb://127.0.0.1:<port>/`), or undefined for anything else (credentials, options, another host).
 */
export function embeddedWireAddress(uri: string): WireAddress | undefined {
  const match = /^mongodb:\/\/([^/@?]+)\/[^?]*$/.exec(uri);
  if (!match) return undefined;
  const host = decodeURIComponent(match[1]);
  if (host.startsWith('/') && host.endsWith('.sock')) return { path: host };
  const port = Number(/^127\.0\.0\.1:(\d{1,5})$/.exec(host)?.[1]);
  return port >= 1 && port <= 65535 ? { host: '127.0.0.1', port } : undefined;
}

/**
 * Commands to the embedded FerretDB over its own socket, without the driver's per-operation
 * layers (server selection with its timer, the pool's check-out and events, an implicit session,
 * options merged at four levels): one OP_MSG out, one back, ~45 µs of CPU against the driver's
 * ~240 µs for a `ping` on this machine. Only for a database with no credentials and no TLS, which
 * is what the embedded one is; the writes every chat turn makes go through it (`driverCollection`),
 * and so do the AI's `db_query` reads (`findAll`, `aggregateAll`, `countAll`).
 *
 * Each reply is matched to its request by `responseTo`. A connection that closes or breaks fails
 * the commands in flight on it with a `MongoNetworkError` (as the driver's would), and the next
 * command opens a new one: a database restarted by its supervisor is reached again at once.
 */
export class EmbeddedWire {
  private readonly connections: (WireConnection | undefined)[];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly address: WireAddress,
    private readonly events?: WireCommandEvents,
    connections = DEFAULT_CONNECTIONS,
  ) {
    this.connections = new Array(connections).fill(undefined);
  }

  /** Runs `command` on database `db`; resolves with the reply document, `ok: 0` as a `MongoServerError`. */
  async command(db: string, command: Document): Promise<Document> {
    if (this.closed)
      throw new MongoNetworkError('The database connection is closed');
    const requestId = this.nextId++;
    if (this.nextId > 0x7fffffff) this.nextId = 1;
    const body = { ...command, $db: db };
    const message = encode(requestId, body);
    this.events?.started({ requestId, databaseName: db, command: body });
    try {
      const reply = await this.connection().send(requestId, message);
      if (reply['ok'] !== 1) throw new MongoServerError(reply as never);
      this.events?.ended({ requestId, reply });
      return reply;
    } catch (error) {
      this.events?.ended({ requestId, error: error as Error });
      throw error;
    }
  }

  close(): void {
    this.closed = true;
    for (const connection of this.connections) connection?.close();
  }

  /** The open connection with the fewest commands in flight; a closed slot is opened again. */
  private connection(): WireConnection {
    let best: WireConnection | undefined;
    for (let i = 0; i < this.connections.length; i++) {
      let connection = this.connections[i];
      if (!connection || connection.broken)
        connection = this.connections[i] = new WireConnection(this.address);
      if (connection.inFlight === 0) return connection;
      if (!best || connection.inFlight < best.inFlight) best = connection;
    }
    return best as WireConnection;
  }
}

/** One socket: requests written in order, replies read as they come and matched by `responseTo`. */
class WireConnection {
  broken = false;
  private readonly socket: Socket;
  private readonly pending = new Map<number, Pending>();
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;

  constructor(address: WireAddress) {
    this.socket =
      'path' in address
        ? connect(address.path)
        : connect(address.port, address.host);
    this.socket.setNoDelay(true);
    // An idle connection does not keep the process alive; one with a command in flight does.
    this.socket.unref();
    this.socket.on('data', (chunk: Buffer) => this.received(chunk));
    this.socket.on('error', (error) => this.fail(error.message));
    this.socket.on('close', () =>
      this.fail('The database closed the connection'),
    );
  }

  get inFlight(): number {
    return this.pending.size;
  }

  send(requestId: number, message: Buffer): Promise<Document> {
    return new Promise<Document>((resolve, reject) => {
      if (this.broken) {
        reject(new MongoNetworkError('The database connection broke'));
        return;
      }
      if (this.pending.size === 0) this.socket.ref();
      this.pending.set(requestId, { resolve, reject });
      this.socket.write(message);
    });
  }

  close(): void {
    this.socket.destroy();
    this.fail('The database connection is closed');
  }

  private received(chunk: Buffer): void {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    while (this.bufferedBytes >= 4) {
      const head = this.buffered.length === 1 ? this.buffered[0] : this.join();
      const length = head.readInt32LE(0);
      if (length < BODY_START + 5 || length > MAX_MESSAGE_BYTES) {
        this.socket.destroy();
        this.fail(`The database sent a message of ${length} bytes`);
        return;
      }
      if (this.bufferedBytes < length) return;
      const all = this.join();
      const message = all.subarray(0, length);
      const rest = all.subarray(length);
      this.buffered = rest.length ? [rest] : [];
      this.bufferedBytes = rest.length;
      this.answer(message);
    }
  }

  private join(): Buffer {
    const joined = Buffer.concat(this.buffered, this.bufferedBytes);
    this.buffered = [joined];
    return joined;
  }

  private answer(message: Buffer): void {
    const responseTo = message.readInt32LE(8);
    const waiting = this.pending.get(responseTo);
    if (!waiting) return;
    this.pending.delete(responseTo);
    if (this.pending.size === 0) this.socket.unref();
    try {
      if (message.readInt32LE(12) !== OP_MSG || message[BODY_START - 1] !== 0)
        throw new Error('not an OP_MSG reply');
      const flags = message.readUInt32LE(HEADER_BYTES);
      const end = message.length - (flags & CHECKSUM_PRESENT ? 4 : 0);
      waiting.resolve(BSON.deserialize(message.subarray(BODY_START, end)));
    } catch (error) {
      waiting.reject(
        new MongoNetworkError(
          `The database sent an unreadable reply: ${(error as Error).message}`,
        ),
      );
    }
  }

  private fail(reason: string): void {
    this.broken = true;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const waiting of pending)
      waiting.reject(new MongoNetworkError(reason));
  }
}

/**
 * An OP_MSG of one body section. Sized first: `BSON.serialize` writes into a buffer of 17 MiB and
 * does not say when a larger command did not fit.
 */
function encode(requestId: number, command: Document): Buffer {
  const size = BSON.calculateObjectSize(command, SERIALIZE);
  if (size > MAX_COMMAND_BYTES) throw new CommandTooLarge(size);
  const message = Buffer.allocUnsafe(BODY_START + size);
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(requestId, 4);
  message.writeInt32LE(0, 8);
  message.writeInt32LE(OP_MSG, 12);
  message.writeUInt32LE(0, HEADER_BYTES);
  message[BODY_START - 1] = 0;
  BSON.serializeWithBufferAndIndex(command, message, {
    ...SERIALIZE,
    index: BODY_START,
  });
  return message;
}
