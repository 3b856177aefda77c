import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const running = globalThis.__METATRON_TEST_DB__;
  if (!running) return;
  await running.database.stop();
  rmSync(running.dataDir, { recursive: true, force: true });
}
