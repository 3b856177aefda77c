import { Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SandboxSecrets } from '../mongo-sandbox/sandbox-secrets';
import {
  AppSettingsRecord,
  AppSettingsSchema,
} from './schemas/app-settings.schema';
import { SettingsController } from './settings.controller';
import { SettingsService } from './settings.service';

/** Global: every feature reads settings (models, keys, timezone), and the sandbox needs the secrets to scrub. */
@Global()
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AppSettingsRecord.name, schema: AppSettingsSchema },
    ]),
  ],
  controllers: [SettingsController],
  providers: [
    SettingsService,
    { provide: SandboxSecrets, useExisting: SettingsService },
  ],
  exports: [SettingsService, SandboxSecrets],
})
export class SettingsModule {}
