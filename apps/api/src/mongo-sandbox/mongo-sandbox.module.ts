import { Module } from '@nestjs/common';
import { MongoSandboxService } from './mongo-sandbox.service';

/**
 * The AI's database sandbox. Needs the mongoose connection (DatabaseModule) and a
 * `SandboxSecrets` provider, which SettingsModule provides globally.
 */
@Module({
  providers: [MongoSandboxService],
  exports: [MongoSandboxService],
})
export class MongoSandboxModule {}
