import { StartUpWork } from '../../src/database/start-up-work';
import { Module, type INestApplication, type Provider } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { NestFactory } from '@nestjs/core';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mongoose';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { AppModule } from '../../src/app/app.module';
import { PasswordHasher } from '../../src/auth/password-hasher';
import { ManualClock } from '../../src/clock/clock';
import { loadAppConfig, type AppConfig } from '../../src/config/app-config';
import type { DatabaseRuntime } from '../../src/database/database-runtime';
import { configureApp, HTTP_APP_OPTIONS } from '../../src/http/configure-app';
import type { WhatsAppGateway } from '../../src/whatsapp/gateway/whatsapp-gateway';
import { sharedTestDatabase } from './test-database';

/** Holds the app and the extra providers a test hands in. */
@Module({})
class TestRootModule {}

export const OWNER_PASSWORD = 'correct horse battery';
export const TEST_INDEX_HTML =
  '<!doctype html><title>MetatronOS</title><mt-root></mt-root>';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  clock: ManualClock;
  /** A fresh supertest client without cookies. */
  http(): TestAgent;
  /** Creates the owner (once) and returns a client that carries the session cookie. */
  owner(): Promise<TestAgent>;
  /** Listens on a loopback port (for clients supertest cannot be, like SSE readers) and returns its URL and an owner `Cookie` header. */
  serve(): Promise<{ url: string; cookie: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Another database (e.g. one a test starts and kills itself). */
  database?: DatabaseRuntime;
  env?: NodeJS.ProcessEnv;
  /** Where the manual clock starts (before the app boots, so start-up work reads it). */
  now?: Date;
  /** A fake WhatsApp link used instead of the real one by permissions, tools and auto-reply. */
  whatsappGateway?: WhatsAppGateway;
  /** Extra providers beside the app (e.g. a prompt section or tool that only a test contributes). */
  providers?: Provider[];
  /** Runs after the providers exist and before start-up hooks (e.g. to hand in fake network peers). */
  beforeInit?: (app: INestApplication) => void | Promise<void>;
}

/**
 * The real Nest app over HTTP on the real embedded database, in a database of
 * its own. Only the clock is replaced (a ManualClock) and the password hash is
 * made cheaper, so tests stay fast.
 */
export async function createTestApp(
  options: TestAppOptions = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-test-data-'));
  // A stand-in for the built console, so the static serving path is the production one.
  const webDistDir = join(dataDir, 'console');
  mkdirSync(webDistDir);
  writeFileSync(join(webDistDir, 'index.html'), TEST_INDEX_HTML);
  writeFileSync(join(webDistDir, 'main-TEST.js'), 'console.log("console");');
  const config = loadAppConfig({
    DATA_DIR: dataDir,
    WEB_DIST_DIR: webDistDir,
    // Memory embeddings call a provider and spend in the background: the specs about them turn them on.
    MEMORY_EMBEDDINGS: 'off',
    ...options.env,
  });
  const database: DatabaseRuntime = options.database ?? sharedTestDatabase();
  const clock = new ManualClock(options.now ?? new Date());

  // NestFactory, as in main.ts: the testing module would build the static-file loader before the HTTP adapter exists.
  const app = await NestFactory.create(
    {
      module: TestRootModule,
      imports: [
        AppModule.forRoot({
          config,
          database,
          clock,
          passwordHasher: new PasswordHasher({ N: 2 ** 10, r: 8, p: 1 }),
          whatsappGateway: options.whatsappGateway,
        }),
      ],
      providers: options.providers ?? [],
    },
    { ...HTTP_APP_OPTIONS, logger: ['error'], abortOnError: false },
  );
  configureApp(app, config);
  await options.beforeInit?.(app);
  await app.init();
  // Index builds run beside the server in production; specs start from a finished start-up.
  await app.get(StartUpWork).settled();

  let ownerAgent: TestAgent | undefined;
  const http = () => request.agent(app.getHttpServer());
  const owner = async () => {
    if (ownerAgent) return ownerAgent;
    const agent = http();
    const setup = await agent
      .post('/api/auth/setup')
      .send({ password: OWNER_PASSWORD });
    // A restarted app on a kept database already has its owner: log in instead.
    if (setup.status === 409)
      await agent
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
    else if (setup.status !== 201)
      throw new Error(`owner setup answered ${setup.status}`);
    ownerAgent = agent;
    return agent;
  };
  return {
    app,
    config,
    clock,
    http,
    owner,
    async serve() {
      await owner();
      if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const login = await http()
        .post('/api/auth/login')
        .send({ password: OWNER_PASSWORD })
        .expect(200);
      return { url, cookie: String(login.headers['set-cookie']).split(';')[0] };
    },
    async close() {
      const connection = app.get<Connection>(getConnectionToken());
      if (!options.database)
        await connection.dropDatabase().catch(() => undefined);
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
