import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module';
import { MongoSandboxService } from './mongo-sandbox.service';

/** The AI's database sandbox: validates and runs its operations, scrubbing the secrets SettingsModule names. */
@Module({
  imports: [SettingsModule],
  providers: [MongoSandboxService],
  exports: [MongoSandboxService],
})
export class MongoSandboxModule {}
