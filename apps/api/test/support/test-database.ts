import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const TEST_MONGODB_URI_ENV = 'METATRON_TEST_MONGODB_URI';

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
