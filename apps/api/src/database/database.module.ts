import { DynamicModule, Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { DatabaseAvailableGuard } from './database-available.guard';
import { DatabaseHealthService } from './database-health.service';
import { EmbeddedDatabaseSupervisor } from './embedded-database-supervisor';
import { EmbeddedWireProvider } from './embedded-wire.provider';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';
import { StartUpWork } from './start-up-work';

/**
 * Wire connections to the embedded FerretDB (the driver's default is 100). SQLite writes one
 * transaction at a time; writers beyond the first wait in its busy handler, which sleeps 1 to
 * 100 ms between tries, so 100 commands at once (a burst of auto-replies) wrote slower than a few
 * with the rest queued in the driver, first come first served. Each FerretDB command may hold two
 * of the 100 SQLite connections FerretDB opens per database (a query's rows while its write
 * runs), so this also keeps them from running out. A ping waiting behind these is still far
 * under the health check's deadline.
 */
export const EMBEDDED_MAX_POOL_SIZE = 16;

/** The mongoose connection and the database's health. Global: every feature's models live on this one connection. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(runtime: DatabaseRuntime): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        MongooseModule.forRoot(runtime.uri, {
          dbName: runtime.dbName,
          // Fail fast instead of queueing operations while the server is away.
          bufferCommands: false,
          serverSelectionTimeoutMS: runtime.serverSelectionTimeoutMs ?? 3000,
          // Only the first connection retries: a database busy for a few seconds at start (the test
          // suites share one, and whole suites failed after 1 retry) is not a dead one.
          retryAttempts: 5,
          retryDelay: 500,
          // FerretDB 1.x lacks some index options; models create their own indexes explicitly.
          autoIndex: false,
          ...(runtime.kind === 'embedded'
            ? { maxPoolSize: EMBEDDED_MAX_POOL_SIZE }
            : {}),
          ...(runtime.monitorCommands ? { monitorCommands: true } : {}),
        }),
      ],
      providers: [
        { provide: DATABASE_RUNTIME, useValue: runtime },
        DatabaseHealthService,
        DatabaseAvailableGuard,
        EmbeddedDatabaseSupervisor,
        EmbeddedWireProvider,
        StartUpWork,
      ],
      exports: [
        DATABASE_RUNTIME,
        DatabaseHealthService,
        DatabaseAvailableGuard,
        StartUpWork,
      ],
    };
  }
}
