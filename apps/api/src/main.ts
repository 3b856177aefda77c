import type { Server } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  ConfigError,
  loadAppConfig,
  logLevelsFrom,
  redactMongoUri,
  type AppConfig,
} from './config/app-config';
import { prepareDataDir } from './database/embedded-database';
import {
  startDatabase,
  type DatabaseRuntime,
} from './database/database-runtime';
import { DataDirLock } from './data-dir-lock';
import { StartupError } from './startup-error';
import { ProcessStop } from './process-stop';
import { saveCompileCacheSoon } from './boot/compile-cache';

/** Prints one line and exits: start-up failures never print a stack trace. */
function fail(message: string, code = 1): never {
  process.stderr.write(`metatronos: ${message}\n`);
  process.exit(code);
}

/** A start that cannot go on: the data dir's lock let go, then one line and exit. */
function startFailed(error: unknown, lock: DataDirLock | undefined): never {
  lock?.release();
  return fail(
    error instanceof StartupError
      ? error.message
      : `Start-up failed: ${(error as Error).message}`,
  );
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadAppConfig(process.env);
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error), 2);
  }

  // Only light modules are loaded so far: the embedded database is spawned first, then the app's
  // modules load while it starts (boot/server-modules.ts).
  let lock: DataDirLock | undefined;
  let starting: Promise<DatabaseRuntime>;
  try {
    prepareDataDir(config.dataDir);
    lock = DataDirLock.acquire(config.dataDir);
    starting = startDatabase(config);
  } catch (error) {
    startFailed(error, lock);
  }
  // Nest colours its output unless NO_COLOR is set; logs that go to a file or journal stay plain.
  if (!process.stdout.isTTY) process.env['NO_COLOR'] ??= '1';
  // Awaited below, once the modules are loaded; a failure meanwhile is not an unhandled rejection.
  starting.catch(() => undefined);
  const {
    AppLogger,
    AppModule,
    HTTP_APP_OPTIONS,
    Logger,
    NestFactory,
    configureApp,
  } = await import('./boot/server-modules');

  const logger = new AppLogger('MetatronOS', {
    json: config.logFormat === 'json',
    logLevels: logLevelsFrom(config.logLevel),
    colors: config.logFormat === 'text' && process.stdout.isTTY,
  });
  Logger.overrideLogger(logger);

  let database: DatabaseRuntime | undefined;
  let app: NestExpressApplication | undefined;
  const stopper = new ProcessStop({
    server: () => app?.getHttpServer() as Server | undefined,
    closeApp: async () => app?.close(),
    stopDatabase: async (graceMs) => database?.embedded?.stop(graceMs),
    releaseLock: () => lock?.release(),
    exit: (code) => process.exit(code),
    log: (message) => logger.log(message),
    error: (message) => logger.error(message),
  });
  const shutdown = async (exitCode: number): Promise<never> => {
    await stopper.stop(exitCode);
    // stop() ends in process.exit(); this only satisfies the type.
    return process.exit(exitCode);
  };
  const abort = async (message: string): Promise<never> => {
    process.stderr.write(`metatronos: ${message}\n`);
    return shutdown(1);
  };

  try {
    logger.log(
      config.mongodbUri
        ? `Using MongoDB at ${redactMongoUri(config.mongodbUri)}`
        : `Starting the embedded database in ${config.dataDir}/db`,
    );
    database = await starting;
    if (database.embedded?.socketPath)
      logger.log(
        `Embedded database ready at ${database.uri} (Unix socket ${database.embedded.socketPath}: only this OS user can connect)`,
      );
    else if (database.embedded)
      logger.warn(
        `Embedded database ready at ${database.uri}: loopback TCP without authentication, every local user can connect`,
      );
  } catch (error) {
    startFailed(error, lock);
  }

  // Whatever ends the process from here on (process.exit anywhere), the lock goes with it.
  process.once('exit', () => lock?.release());
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => stopper.onSignal(signal));

  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot({ config, database }),
      {
        ...HTTP_APP_OPTIONS,
        logger,
        abortOnError: false,
      },
    );
    configureApp(app, config);
    await app.init();
    // Listen ourselves rather than app.listen(), which logs its own stack-ish line on failure.
    const server = app.getHttpServer() as Server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') {
      await abort(
        `Port ${config.port} on ${config.host} is already in use. Stop the other program or set PORT.`,
      );
    }
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
      await abort(
        `Cannot listen on ${config.host}:${config.port}: ${err.message}. Check HOST.`,
      );
    }
    await abort(`Start-up failed: ${err.message}`);
  }

  const cached = saveCompileCacheSoon();
  logger.debug(
    cached
      ? `Compile cache: ${cached.hits} modules from the cache, ${cached.compiled} compiled, ${cached.rejected} rejected`
      : 'Compile cache: off',
  );
  const where = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  logger.log(
    `MetatronOS is ready at ${where} (database: ${database.kind}, data: ${config.dataDir})`,
  );
  if (!['127.0.0.1', 'localhost', '::1'].includes(config.host)) {
    logger.warn(
      `Listening on ${config.host}: MetatronOS is reachable from other machines. Put it behind HTTPS.`,
    );
  }
}

void main();
