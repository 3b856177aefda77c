import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { SettingsModule } from '../settings/settings.module';
import { KnownSecrets } from './known-secrets';

/** Every secret the app holds, and the redaction of them from what the model or its files carry. */
@Module({
  imports: [SettingsModule, AccountsModule],
  providers: [KnownSecrets],
  exports: [KnownSecrets],
})
export class SecretsModule {}
