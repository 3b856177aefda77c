import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AccountsModule } from '../../accounts/accounts.module';
import { AiToolsModule } from '../../ai-tools/ai-tools.module';
import { ChatsModule } from '../../chats/chats.module';
import { SettingsModule } from '../../settings/settings.module';
import { AutomationsModule } from '../automations.module';
import { CronController } from './cron.controller';
import { SandboxCollectionWriter } from '../../mongo-sandbox/sandbox-collection-owners';
import { CronJobsDbWriter } from './cron-jobs-db-writer';
import { CronJobsService } from './cron-jobs.service';
import { CronScheduler } from './cron-scheduler';
import { MailTriggerWatcher } from './mail-trigger-watcher';
import { ManageCronjobTool } from './manage-cronjob.tool';
import { CronJobRecord, CronJobSchema } from './schemas/cron-job.schema';

/** Jobs: `cronjobs`, their REST routes, the manage_cronjob tool, the scheduler and the new-mail watcher. */
@Module({
  imports: [
    AccountsModule,
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
    MailTriggerWatcher,
    ManageCronjobTool,
    // db_query's writes to `cronjobs` (found by the sandbox).
    { provide: SandboxCollectionWriter, useClass: CronJobsDbWriter },
  ],
  exports: [CronJobsService],
})
export class CronModule {}
