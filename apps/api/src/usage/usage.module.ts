import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SettingsModule } from '../settings/settings.module';
import {
  UsageRollupRecord,
  UsageRollupSchema,
} from './schemas/usage-rollup.schema';
import { UsageController } from './usage.controller';
import { UsageRecorder } from './usage-recorder';
import { UsageRollups } from './usage-rollups';
import { UsageService } from './usage.service';

/** Token usage: the daily rollups (`usage`), the recorder the runner meters adapters with, `GET /api/usage`. */
@Module({
  imports: [
    SettingsModule,
    MongooseModule.forFeature([
      { name: UsageRollupRecord.name, schema: UsageRollupSchema },
    ]),
  ],
  controllers: [UsageController],
  providers: [UsageRecorder, UsageRollups, UsageService],
  exports: [UsageRecorder],
})
export class UsageModule {}
