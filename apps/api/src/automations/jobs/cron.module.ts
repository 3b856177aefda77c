import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../../ai-tools/ai-tools.module';
import { ChatsModule } from '../../chats/chats.module';
import { SettingsModule } from '../../settings/settings.module';
import { AutomationsModule } from '../automations.module';
import { CronController } from './cron.controller';
import { SandboxCollectionWriter } from '../../mongo-sandbox/sandbox-collection-owners';
import { CronJobsDbWriter } from './cron-jobs-db-writer';
import { CronJobsService } from './cron-jobs.service';
import { CronScheduler } from './cron-scheduler';
import { ManageCronjobTool } from './manage-cronjob.tool';
import { CronJobRecord, CronJobSchema } from './schemas/cron-job.schema';

/** Scheduled jobs: `cronjobs`, their REST routes, the manage_cronjob tool and the scheduler. */
@Module({
  imports: [
    AiToolsModule,
    AutomationsModule,
    ChatsModule,
    SettingsModule,
    MongooseModule.forFeature([
      { name: CronJobRecord.name, schema: CronJobSchema },
    ]),
  ],
  controllers: [CronController],
  providers: [
    CronJobsService,
    CronScheduler,
    ManageCronjobTool,
    // db_query's writes to `cronjobs` (found by the sandbox).
    { provide: SandboxCollectionWriter, useClass: CronJobsDbWriter },
  ],
  exports: [CronJobsService],
})
export class CronModule {}
