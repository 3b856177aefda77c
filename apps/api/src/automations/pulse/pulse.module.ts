import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../../ai-tools/ai-tools.module';
import { SettingsModule } from '../../settings/settings.module';
import { SystemInstructionModule } from '../../system-instruction/system-instruction.module';
import { AutomationsModule } from '../automations.module';
import { ManagePulseTool } from './manage-pulse.tool';
import { PulseController } from './pulse.controller';
import {
  PulseNotesPromptSection,
  PulseCountersPromptSection,
  PulseStatusPromptSection,
} from './pulse-prompt-sections';
import { PulseScheduler } from './pulse-scheduler';
import { PulseService } from './pulse.service';
import {
  PulseStateRecord,
  PulseStateSchema,
} from './schemas/pulse-state.schema';

/** Pulse, the heartbeat: its settings and notes, the scheduler, the manage_pulse tool and its prompt sections. */
@Module({
  imports: [
    AiToolsModule,
    AutomationsModule,
    SettingsModule,
    SystemInstructionModule,
    MongooseModule.forFeature([
      { name: PulseStateRecord.name, schema: PulseStateSchema },
    ]),
  ],
  controllers: [PulseController],
  providers: [
    PulseService,
    PulseScheduler,
    ManagePulseTool,
    PulseStatusPromptSection,
    PulseCountersPromptSection,
    PulseNotesPromptSection,
  ],
  exports: [PulseService],
})
export class PulseModule {}
