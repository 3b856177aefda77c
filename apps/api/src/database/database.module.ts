import { DynamicModule, Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { DatabaseAvailableGuard } from './database-available.guard';
import { DatabaseHealthService } from './database-health.service';
import { EmbeddedDatabaseSupervisor } from './embedded-database-supervisor';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';
import { StartUpWork } from './start-up-work';

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
          serverSelectionTimeoutMS: 3000,
          // Only the first connection retries: a database busy for a few seconds at start (the test
          // suites share one, and whole suites failed after 1 retry) is not a dead one.
          retryAttempts: 5,
          retryDelay: 500,
          // FerretDB 1.x lacks some index options; models create their own indexes explicitly.
          autoIndex: false,
        }),
      ],
      providers: [
        { provide: DATABASE_RUNTIME, useValue: runtime },
        DatabaseHealthService,
        DatabaseAvailableGuard,
        EmbeddedDatabaseSupervisor,
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
