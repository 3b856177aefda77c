import type { Server } from 'node:http';
import type { HttpAdapterHost } from '@nestjs/core';

/**
 * Runs `work` once the HTTP server listens (now, if it already does), so that warming a cache neither
 * delays the start nor competes with it. A server that never listens (an app used without HTTP) never
 * runs it: the caches built this way also build on their first use.
 */
export function afterListening(
  adapterHost: HttpAdapterHost,
  work: () => void,
): void {
  const server = adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
  if (!server) return;
  if (server.listening) setImmediate(work);
  else server.once('listening', () => setImmediate(work));
}
