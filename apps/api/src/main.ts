import { Logger } from '@nestjs/common';
import { AppLogger } from './app-logger';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app/app.module';
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
import { configureApp } from './http/configure-app';
import { DataDirLock } from './data-dir-lock';
import { StartupError } from './startup-error';

/** A stop (SIGINT, SIGTERM) ends the process within 5 s, whatever is running; this leaves room to exit. */
const HARD_EXIT_MS = 4500;
/** Open connections (a download, an upload, an event stream that did not end) are cut after this. */
const CONNECTION_GRACE_MS = 2000;
/** The embedded database gets SIGTERM, then SIGKILL after this. */
const DATABASE_STOP_GRACE_MS = 2000;

/** Prints one line and exits: start-up failures never print a stack trace. */
function fail(message: string, code = 1): never {
  process.stderr.write(`metatronos: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadAppConfig(process.env);
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error), 2);
  }

  // Nest colours its output unless NO_COLOR is set; logs that go to a file or journal stay plain.
  if (!process.stdout.isTTY) process.env['NO_COLOR'] ??= '1';
  const logger = new AppLogger('MetatronOS', {
    json: config.logFormat === 'json',
    logLevels: logLevelsFrom(config.logLevel),
    colors: config.logFormat === 'text' && process.stdout.isTTY,
  });
  Logger.overrideLogger(logger);

  let lock: DataDirLock | undefined;
  let database: DatabaseRuntime | undefined;
  let app: NestExpressApplication | undefined;
  let shuttingDown = false;

  /** Ends the process now, whatever is still running: the lock is released and the database told to stop. */
  const exitNow = (exitCode: number): never => {
    void database?.embedded?.stop();
    lock?.release();
    process.exit(exitCode);
  };
  const shutdown = async (exitCode: number): Promise<never> => {
    shuttingDown = true;
    // Whatever hangs (a hook, a connection, the database), the process ends within HARD_EXIT_MS.
    setTimeout(() => {
      logger.error(
        `Still stopping after ${HARD_EXIT_MS / 1000} s: exiting without waiting for the rest`,
      );
      exitNow(1);
    }, HARD_EXIT_MS).unref();
    const server = app?.getHttpServer() as Server | undefined;
    // No new connections; idle keep-alive ones close now. Event streams end with their last event
    // as the app closes (AppEventBus); whatever is still open after the grace period is cut.
    server?.close();
    // A connection whose response just ended (an event stream, a reply) stays open as keep-alive: close it then.
    const idle = setInterval(() => server?.closeIdleConnections(), 50);
    server?.closeIdleConnections();
    const cut = setTimeout(
      () => server?.closeAllConnections(),
      CONNECTION_GRACE_MS,
    );
    // Close the app (and its database connections) before stopping the server under them.
    await app
      ?.close()
      .catch((error: Error) =>
        logger.error(`Error while closing: ${error.message}`),
      );
    clearTimeout(cut);
    clearInterval(idle);
    await database?.embedded?.stop(DATABASE_STOP_GRACE_MS);
    lock?.release();
    process.exit(exitCode);
  };
  const abort = async (message: string): Promise<never> => {
    process.stderr.write(`metatronos: ${message}\n`);
    return shutdown(1);
  };

  try {
    prepareDataDir(config.dataDir);
    lock = DataDirLock.acquire(config.dataDir);
    logger.log(
      config.mongodbUri
        ? `Using MongoDB at ${redactMongoUri(config.mongodbUri)}`
        : `Starting the embedded database in ${config.dataDir}/db`,
    );
    database = await startDatabase(config);
    if (database.embedded)
      logger.log(`Embedded database ready at ${database.uri} (loopback only)`);
  } catch (error) {
    lock?.release();
    fail(
      error instanceof StartupError
        ? error.message
        : `Start-up failed: ${(error as Error).message}`,
    );
  }

  // Whatever ends the process from here on (process.exit anywhere), the lock goes with it.
  process.once('exit', () => lock?.release());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (shuttingDown) {
        // A second Ctrl+C: stop waiting.
        logger.warn(`${signal} received again, exiting now`);
        exitNow(1);
      }
      logger.log(`${signal} received, shutting down`);
      void shutdown(0);
    });
  }

  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot({ config, database }),
      {
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
