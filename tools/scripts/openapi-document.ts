// Builds the app's OpenAPI document the way the running app does (configureApp + buildOpenApiDocument),
// from an app created in Nest's preview mode: modules are scanned for their metadata but no provider is
// instantiated, so no database is started or contacted. Loaded by tools/scripts/openapi.mjs.
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../../apps/api/src/app/app.module';
import { loadAppConfig } from '../../apps/api/src/config/app-config';
import {
  buildOpenApiDocument,
  configureApp,
} from '../../apps/api/src/http/configure-app';

export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-openapi-'));
  try {
    // Only configuration shapes the document; an empty environment gives the defaults.
    const config = loadAppConfig({
      DATA_DIR: dataDir,
      WEB_DIST_DIR: join(dataDir, 'no-console'),
    });
    const app = await NestFactory.create(
      AppModule.forRoot({
        config,
        // Never connected to: preview mode does not instantiate the connection.
        database: {
          kind: 'embedded',
          uri: 'mongodb://127.0.0.1:1/',
          dbName: 'openapi',
        },
      }),
      { preview: true, logger: ['error'], abortOnError: false },
    );
    configureApp(app, config);
    const document = buildOpenApiDocument(app);
    await app.close();
    return document;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
