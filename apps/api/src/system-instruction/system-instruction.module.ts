import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { SettingsModule } from '../settings/settings.module';
import { CombinedPromptBuilder } from './combined-prompt.builder';
import {
  DatabasePromptSection,
  DateTimePromptSection,
  MemoryPromptSection,
} from './core-prompt-sections';
import {
  SystemInstructionRecord,
  SystemInstructionSchema,
} from './schemas/system-instruction.schema';
import { SystemInstructionController } from './system-instruction.controller';
import { SystemInstructionService } from './system-instruction.service';

/** The system instruction (core, memory, schema doc) and the prompt builder that gathers every contributed section. */
@Module({
  imports: [
    DiscoveryModule,
    SettingsModule,
    MongooseModule.forFeature([
      { name: SystemInstructionRecord.name, schema: SystemInstructionSchema },
    ]),
  ],
  controllers: [SystemInstructionController],
  providers: [
    SystemInstructionService,
    CombinedPromptBuilder,
    DateTimePromptSection,
    MemoryPromptSection,
    DatabasePromptSection,
  ],
  exports: [SystemInstructionService, CombinedPromptBuilder],
})
export class SystemInstructionModule {}
