import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import type { DatabaseRuntime } from '../../src/database/database-runtime';

export const TEST_MONGODB_URI_ENV = 'METATRON_TEST_MONGODB_URI';

/**
 * Server selection for apps on the shared test database. Every Jest worker boots apps on the one
 * FerretDB while the machine is busy: at load ~57 a first connection's answer sat unread behind
 * seconds of blocked event loop (Nest instantiating the app), the 3 s production limit fired
 * first, and a suite's beforeAll ran out of time in retries. Selection ends as soon as the server
 * answers, so a longer limit costs nothing on a normal start.
 */
export const SHARED_DB_SERVER_SELECTION_MS = 20_000;

/** The launcher built by tools/ferretdb/build.sh (the test command builds it first). */
export function ferretdbBinary(): string {
  const bin =
    process.env['FERRETDB_BIN'] ??
    join(__dirname, '../../../../tools/ferretdb/bin/ferretdb-launcher');
  if (!existsSync(bin)) {
    throw new Error(
      `${bin} is missing: run tools/ferretdb/build.sh (npm test does) before the API tests.`,
    );
  }
  return bin;
}

/** A database of its own (a fresh name unless given) on the suite's shared server. */
export function sharedTestDatabase(
  dbName = `test_${randomBytes(6).toString('hex')}`,
): DatabaseRuntime {
  const uri = process.env[TEST_MONGODB_URI_ENV];
  if (!uri)
    throw new Error(
      `${TEST_MONGODB_URI_ENV} is not set: is the Jest globalSetup configured?`,
    );
  return {
    kind: 'embedded',
    uri,
    dbName,
    serverSelectionTimeoutMs: SHARED_DB_SERVER_SELECTION_MS,
  };
}

/** A fresh database on the suite's shared server, through a driver client that records its commands. */
export interface WatchedTestDatabase {
  client: MongoClient;
  db: Db;
  /** Every command sent to this database, in order (clear it with `commands.length = 0`). */
  commands: CommandStartedEvent[];
  /** How many `name` commands were recorded. */
  count(name: string): number;
  /** Drops the database and closes the client. */
  close(): Promise<void>;
}

export async function watchedTestDatabase(
  prefix: string,
): Promise<WatchedTestDatabase> {
  const uri = process.env[TEST_MONGODB_URI_ENV];
  if (!uri) throw new Error(`${TEST_MONGODB_URI_ENV} is not set`);
  const dbName = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = await new MongoClient(uri, {
    monitorCommands: true,
    serverSelectionTimeoutMS: SHARED_DB_SERVER_SELECTION_MS,
  }).connect();
  const commands: CommandStartedEvent[] = [];
  client.on('commandStarted', (event) => {
    if (event.databaseName === dbName) commands.push(event);
  });
  const db = client.db(dbName);
  return {
    client,
    db,
    commands,
    count: (name) => commands.filter((c) => c.commandName === name).length,
    close: async () => {
      await db.dropDatabase();
      await client.close();
    },
  };
}
