import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SandboxSecrets } from '../mongo-sandbox/sandbox-secrets';
import {
  AppSettingsRecord,
  AppSettingsSchema,
} from './schemas/app-settings.schema';
import { ModelCatalog } from './model-catalog';
import { SettingsController } from './settings.controller';
import { SettingsService } from './settings.service';

/** The owner's settings (`settings`, `/api/settings`), and the secrets the sandbox scrubs (`SandboxSecrets`). */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AppSettingsRecord.name, schema: AppSettingsSchema },
    ]),
  ],
  controllers: [SettingsController],
  providers: [
    SettingsService,
    ModelCatalog,
    { provide: SandboxSecrets, useExisting: SettingsService },
  ],
  exports: [SettingsService, SandboxSecrets],
})
export class SettingsModule {}
