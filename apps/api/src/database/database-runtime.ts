import type { DatabaseKind } from '@metatronos/shared-types';
import { redactMongoUri } from '../config/app-config';
import { StartupError } from '../startup-error';
import { EmbeddedDatabase } from './embedded-database';

export const DEFAULT_DB_NAME = 'metatronos';

/** The database this process uses, decided before Nest boots. */
export interface DatabaseRuntime {
  kind: DatabaseKind;
  uri: string;
  dbName: string;
  /** Present when this process owns the embedded server. */
  embedded?: EmbeddedDatabase;
  /** Delays before each restart of a crashed embedded server (tests shorten or lengthen them). */
  restartDelaysMs?: number[];
  /** The driver emits `commandStarted` and the like on its client (a spec counts a turn's commands). */
  monitorCommands?: boolean;
  /**
   * How long an operation waits for a reachable server (default 3 s: fail fast while the server
   * is away). The test suites, which share one database on a busy machine, give it longer: a
   * connection whose answer sits behind seconds of blocked event loop is not a dead server.
   */
  serverSelectionTimeoutMs?: number;
}

export const DATABASE_RUNTIME = Symbol('DATABASE_RUNTIME');

/** Pings a server once with a short timeout; throws a StartupError naming the (redacted) address. */
export async function pingMongo(uri: string, timeoutMs = 5000): Promise<void> {
  // Loaded here, not at the top: main.ts starts the embedded database before the app's modules
  // (mongoose among them) load, so that the two overlap.
  const { default: mongoose } = await import('mongoose');
  const client = new mongoose.mongo.MongoClient(uri, {
    serverSelectionTimeoutMS: timeoutMs,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } catch (error) {
    throw new StartupError(
      `Cannot reach MongoDB at ${redactMongoUri(uri)}: ${(error as Error).message}`,
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The database named in the URI's path, or ours. */
export function dbNameFromUri(uri: string): string {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(uri);
  return match?.[1] ? decodeURIComponent(match[1]) : DEFAULT_DB_NAME;
}

/** Connects to MONGODB_URI when set, otherwise starts the embedded server; waits for a ping either way. */
export async function startDatabase(options: {
  mongodbUri: string | undefined;
  dataDir: string;
  ferretdbBin: string;
  /** Opt-in loopback TCP port for the embedded server (0 = a free one); unset = Unix socket only. */
  embeddedDbTcpPort?: number;
}): Promise<DatabaseRuntime> {
  if (options.mongodbUri) {
    await pingMongo(options.mongodbUri);
    return {
      kind: 'external',
      uri: options.mongodbUri,
      dbName: dbNameFromUri(options.mongodbUri),
    };
  }
  const embedded = await EmbeddedDatabase.start({
    binPath: options.ferretdbBin,
    dataDir: options.dataDir,
    tcpPort: options.embeddedDbTcpPort,
  });
  try {
    await pingMongo(embedded.uri);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return {
    kind: 'embedded',
    uri: embedded.uri,
    dbName: DEFAULT_DB_NAME,
    embedded,
  };
}
