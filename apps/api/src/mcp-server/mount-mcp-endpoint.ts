import { Logger, type INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MCP_ENDPOINT_PATH } from '@metatronos/shared-types';
import { McpEndpoint } from './mcp-endpoint';

/**
 * Mounts `/mcp` on the Express app, outside the `/api` prefix and ahead of the
 * console's page fallback (which would answer a GET with index.html). The
 * endpoint is looked up at the first request: an app built only for its
 * OpenAPI document (preview mode) has no instances.
 */
export function mountMcpEndpoint(app: INestApplication): void {
  let endpoint: McpEndpoint | undefined;
  app.use(
    MCP_ENDPOINT_PATH,
    (req: Request, res: Response, next: NextFunction): void => {
      endpoint ??= app.get(McpEndpoint, { strict: false });
      if (!endpoint) {
        next();
        return;
      }
      endpoint.handle(req, res, next).catch((error: unknown) => {
        // Never Express's default error page (it prints a stack trace).
        new Logger('McpEndpoint').warn(
          `MCP request failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        if (res.headersSent) {
          res.end();
          return;
        }
        res.status(503).json({
          statusCode: 503,
          message: 'MCP is not available right now; try again shortly.',
          error: 'Service Unavailable',
        });
      });
    },
  );
}
