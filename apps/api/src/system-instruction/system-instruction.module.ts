import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
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

/** Global: the runner, the tools and later Pulse read the instruction and build prompts. */
@Global()
@Module({
  imports: [
    DiscoveryModule,
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
