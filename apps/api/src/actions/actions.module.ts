import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { SettingsModule } from '../settings/settings.module';
import { ActionsController } from './actions.controller';
import { PendingActionsService } from './pending-actions.service';
import { UntrustedContentPromptSection } from './untrusted-content-prompt-section';
import {
  PendingActionRecord,
  PendingActionSchema,
} from './schemas/pending-action.schema';

/**
 * Pending actions: the store the action policy (action-policy.ts, applied in
 * `AiToolRegistry.call`) hands held calls to, and `/api/actions` to approve, edit or
 * discard them. It registers itself with the registry at start-up.
 */
@Module({
  imports: [
    AiToolsModule,
    SettingsModule,
    MongooseModule.forFeature([
      { name: PendingActionRecord.name, schema: PendingActionSchema },
    ]),
  ],
  controllers: [ActionsController],
  providers: [PendingActionsService, UntrustedContentPromptSection],
  exports: [PendingActionsService],
})
export class ActionsModule {}
