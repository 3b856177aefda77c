import type { INestApplication, NestApplicationOptions } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
} from '@nestjs/swagger';
import cookieParser from 'cookie-parser';
import express from 'express';
import type { AppConfig } from '../config/app-config';
import { SESSION_COOKIE } from '../auth/session-cookie';
import { CHAT_EXTRA_MODELS } from '../chats/dto/chat.dto';
import { APP_VERSION } from '../version';
import { AppExceptionFilter } from './app-exception.filter';
import { AppValidationPipe } from './app-validation-pipe';
import { refuseDeepJson, refuseDeepQuery } from './json-depth';
import { API_PREFIX } from './api-prefix';
import { hostAllowlist } from './host-allowlist.middleware';
import { requestOriginGuard } from './request-origin.middleware';
import { HELMET_OPTIONS, securityHeaders } from './security-headers';
import { serveConsole } from './serve-console';
import { inOneLayer } from './one-layer';
import { mountMcpEndpoint } from '../mcp-server/mount-mcp-endpoint';

/**
 * Options for `NestFactory.create` with every app that `configureApp` configures: Nest's own body
 * parsers stay out (configureApp registers the JSON parser with its depth check; Nest would add an
 * urlencoded parser that every request passes through, and that only a GET, HEAD or OPTIONS could
 * reach, since the request-origin guard answers 415 to a form body on any other method).
 */
export const HTTP_APP_OPTIONS = {
  bodyParser: false,
} as const satisfies NestApplicationOptions;

/** Everything main.ts and the tests both need on the app before it listens. */
export function configureApp(app: INestApplication, config: AppConfig): void {
  // Every request passes these, in this order, from one router layer (see inOneLayer).
  app.use(
    inOneLayer(
      hostAllowlist(config.allowedHosts),
      // Request forgery: state-changing requests from another origin, or with a form's body type, stop here (before body parsing).
      requestOriginGuard({
        allowedHosts: config.allowedHosts,
        trustedOrigins: config.trustedOrigins,
      }),
      securityHeaders(HELMET_OPTIONS),
      cookieParser(),
      // The JSON parser, with a depth check added (Nest's are off: HTTP_APP_OPTIONS).
      express.json({ verify: refuseDeepJson }),
      refuseDeepQuery,
    ),
  );
  // /mcp (for the owner's other agents) sits at the root, before the console's page fallback.
  mountMcpEndpoint(app);
  serveConsole(app, config.webDistDir);
  app.setGlobalPrefix(API_PREFIX);
  app.useGlobalPipes(new AppValidationPipe());
  app.useGlobalFilters(
    new AppExceptionFilter(app.get(HttpAdapterHost).httpAdapter),
  );

  SwaggerModule.setup(
    `${API_PREFIX}/docs`,
    app,
    () => buildOpenApiDocument(app),
    { jsonDocumentUrl: `${API_PREFIX}/docs-json` },
  );
}

/**
 * The OpenAPI document of a configured app: what `/api/docs-json` serves and
 * what `npm run openapi` writes to docs/openapi.json. It reads only the
 * modules' metadata, so an app created in preview mode (no database) will do.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  return SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('MetatronOS API')
      .setDescription(
        'REST and SSE API of MetatronOS. Every route except health and auth needs the owner session cookie ' +
          `(\`${SESSION_COOKIE}\`), obtained from POST /api/auth/login.`,
      )
      .setVersion(APP_VERSION)
      .addCookieAuth(SESSION_COOKIE)
      .build(),
    { extraModels: [...CHAT_EXTRA_MODELS] },
  );
}
