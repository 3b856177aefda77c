import { BudgetModule } from '../budget/budget.module';
import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ChatsModule } from '../chats/chats.module';
import { AutomationRunsService } from './automation-runs.service';
import { AutomationTicker } from './automation-ticker';
import { AutomationsMode } from './automations-mode';
import {
  AutomationRunRecord,
  AutomationRunSchema,
} from './schemas/automation-run.schema';

/** What scheduled jobs and Pulse share: the ticker, the run history, running a turn in a chat, and the `automations` mode. */
@Module({
  imports: [
    ChatsModule,
    BudgetModule,
    MongooseModule.forFeature([
      { name: AutomationRunRecord.name, schema: AutomationRunSchema },
    ]),
  ],
  providers: [AutomationRunsService, AutomationTicker, AutomationsMode],
  exports: [AutomationRunsService, AutomationTicker],
})
export class AutomationsModule {}
