import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from '../../src/database/embedded-database';
import { TEST_MONGODB_URI_ENV, ferretdbBinary } from './test-database';

declare global {
  var __METATRON_TEST_DB__:
    | { database: EmbeddedDatabase; dataDir: string }
    | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env[TEST_MONGODB_URI_ENV]) return; // a server given from outside, e.g. a real MongoDB
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-test-db-'));
  const database = await EmbeddedDatabase.start({
    binPath: ferretdbBinary(),
    dataDir,
  });
  process.env[TEST_MONGODB_URI_ENV] = database.uri;
  globalThis.__METATRON_TEST_DB__ = { database, dataDir };
}
