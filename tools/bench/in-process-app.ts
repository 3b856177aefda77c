// The real Nest app in the bench process, on its own embedded FerretDB and data dir, listening on a free
// loopback port, with the owner set up and a model pointed at the fake LLM upstream. Benches that need the
// app's services (the clock-free scheduler, the WhatsApp socket factory) use this instead of the built server.
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConsoleLogger,
  Module,
  type INestApplication,
  type Provider,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../apps/api/src/app/app.module';
import { PasswordHasher } from '../../apps/api/src/auth/password-hasher';
import { loadAppConfig } from '../../apps/api/src/config/app-config';
import { EmbeddedDatabase } from '../../apps/api/src/database/embedded-database';
import {
  configureApp,
  HTTP_APP_OPTIONS,
} from '../../apps/api/src/http/configure-app';
import { WhatsAppAutoReplySettings } from '../../apps/api/src/whatsapp/auto-reply/whatsapp-auto-reply.settings';
import type { ReplaceableSocketFactory } from '../../apps/api/src/whatsapp/gateway/replaceable-socket.factory';
import { WhatsAppSocketFactory } from '../../apps/api/src/whatsapp/gateway/whatsapp-socket';
import { StartUpWork } from '../../apps/api/src/database/start-up-work';
import {
  FakeWhatsAppSocketFactory,
  type FakeWhatsAppSocket,
} from '../../apps/api/test/support/fake-whatsapp-socket';
import type { FakeLlmServer } from '../fake-llm/fake-llm-server';

const PASSWORD = 'bench password 1';
const DB_NAME = 'bench';

/** Errors and warnings from the app, without the one about the web console not being served. */
class BenchLogger extends ConsoleLogger {
  override warn(message: unknown, ...rest: unknown[]): void {
    if (
      typeof message === 'string' &&
      message.startsWith('The console is not built')
    )
      return;
    super.warn(message, ...rest);
  }
}

/** Holds the app and a bench's extra providers. */
@Module({})
class BenchRootModule {}

export interface BenchApp {
  url: string;
  cookie: string;
  app: INestApplication;
  /** The embedded database server (`mongodb://…/`, no database name) and the app's database on it. */
  databaseUri: string;
  dbName: string;
  dataDir: string;
  /** One owner request; throws with the status and body unless it succeeded. */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export async function startBenchApp(
  fake: FakeLlmServer,
  options: {
    beforeInit?: (app: INestApplication) => void;
    /** Extra providers beside the app (a tool only a bench contributes). */
    providers?: Provider[];
    /** Environment of the app's config beside DATA_DIR (e.g. `MEMORY_EMBEDDINGS`). */
    env?: Record<string, string>;
  } = {},
): Promise<BenchApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-'));
  const database = await EmbeddedDatabase.start({
    binPath: join(process.cwd(), 'tools/ferretdb/bin/ferretdb-launcher'),
    dataDir,
  });
  process.env['OPENAI_BASE_URL'] = fake.openaiBaseUrl;
  const config = loadAppConfig({
    DATA_DIR: dataDir,
    WEB_DIST_DIR: join(dataDir, 'none'),
    // The bench key would embed every message a bench writes in the background: only the memory bench measures that.
    MEMORY_EMBEDDINGS: 'off',
    ...options.env,
  });
  const root = AppModule.forRoot({
    config,
    database: { kind: 'embedded', uri: database.uri, dbName: DB_NAME },
    passwordHasher: new PasswordHasher({ N: 1024, r: 8, p: 1 }),
  });
  const app = await NestFactory.create(
    options.providers?.length
      ? {
          module: BenchRootModule,
          imports: [root],
          providers: options.providers,
        }
      : root,
    {
      ...HTTP_APP_OPTIONS,
      logger: new BenchLogger({ logLevels: ['error', 'warn'] }),
    },
  );
  configureApp(app, config);
  options.beforeInit?.(app);
  await app.init();
  const server = app.getHttpServer() as Server;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  // Index builds run beside the server: the figures are taken once they are done.
  await app.get(StartUpWork).settled();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    await app.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const setup = await fetch(`${url}/api/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: PASSWORD }),
    });
    if (!setup.ok)
      throw new Error(`setup: ${setup.status} ${await setup.text()}`);
    const cookie = String(setup.headers.get('set-cookie')).split(';')[0];
    const call = async <T = unknown>(
      method: string,
      path: string,
      body?: unknown,
    ): Promise<T> => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', cookie },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok)
        throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (res.status === 204 ? undefined : await res.json()) as T;
    };
    await call('PATCH', '/api/settings', {
      openaiApiKey: 'sk-bench-000000000000',
      primaryModel: 'gpt-4.1-mini',
      // Benches measure load, not spend: no caps (the budget bench sets its own).
      budget: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: null },
    });
    return {
      url,
      cookie,
      app,
      databaseUri: database.uri,
      dbName: DB_NAME,
      dataDir,
      call,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export type BenchAppWithWhatsApp = BenchApp & { socket: FakeWhatsAppSocket };

/** The bench app with a fake WhatsApp socket in place of Baileys, linked, and the auto-reply limits off. */
export async function startBenchAppWithWhatsApp(
  fake: FakeLlmServer,
): Promise<BenchAppWithWhatsApp> {
  const sockets = new FakeWhatsAppSocketFactory();
  const api = await startBenchApp(fake, {
    beforeInit: (app) => {
      (app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory).replaceWith(
        sockets,
      );
      Object.assign(app.get(WhatsAppAutoReplySettings), {
        perContactIntervalMs: 0,
        perMinute: 0,
        loopReplies: 0,
      });
    },
  });
  try {
    await api.call('POST', '/api/whatsapp/connect');
    while (sockets.sockets.length === 0)
      await new Promise((done) => setTimeout(done, 5));
    sockets.latest.open();
    return Object.assign(api, { socket: sockets.latest });
  } catch (error) {
    await api.close();
    throw error;
  }
}
