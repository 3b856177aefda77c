import { Logger, type INestApplication } from '@nestjs/common';
import express, {
  type NextFunction,
  type Request,
  type Response,
} from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { API_PREFIX } from './api-prefix';

/**
 * Serves the built Angular console at `/` with SPA fallback: a GET for a page
 * route (no file extension, outside /api) gets index.html. API paths and
 * missing assets fall through to Nest and get its JSON 404.
 */
export function serveConsole(
  app: INestApplication,
  webDistDir: string,
): boolean {
  const index = join(webDistDir, 'index.html');
  if (!existsSync(index)) {
    new Logger('Console').warn(
      `The console is not built (${index} missing); serving the API only.`,
    );
    return false;
  }
  const assets = express.static(webDistDir, {
    index: false,
    // Hashed bundles never change; index.html must be revalidated to pick up a new build.
    setHeaders: (res, path) =>
      res.setHeader(
        'Cache-Control',
        path.endsWith('.html')
          ? 'no-cache'
          : 'public, max-age=31536000, immutable',
      ),
  });
  // No file of the console's build lies under /api: an API request skips the file look-up
  // (a GET would otherwise ask the file system for its path before reaching Nest).
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (isApiPath(req.path)) next();
    else void assets(req, res, next);
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const isApi = isApiPath(req.path);
    const isPage =
      (req.method === 'GET' || req.method === 'HEAD') &&
      !isApi &&
      !/\.[^/]+$/.test(req.path);
    if (!isPage) {
      next();
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return true;
}

function isApiPath(path: string): boolean {
  return path === `/${API_PREFIX}` || path.startsWith(`/${API_PREFIX}/`);
}
