import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AccountCredentials } from './account-records';
import { AccountConnectionTester } from './account-connection-test';
import { AccountsController } from './accounts.controller';
import { AccountsPromptSection } from './accounts-prompt-section';
import { AccountsService } from './accounts.service';
import { AccountsAiDirectory, AccountsStore } from './accounts-store';
import { AccountHostResolver } from './connections/account-address';
import { AccountDoc, AccountSchema } from './schemas/account.schema';

/**
 * Email and calendar accounts: stored with their passwords in the hidden
 * `auth_accounts` collection; other modules read them through AccountCredentials.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AccountDoc.name, schema: AccountSchema },
    ]),
  ],
  controllers: [AccountsController],
  providers: [
    AccountsStore,
    AccountsService,
    AccountConnectionTester,
    AccountsPromptSection,
    { provide: AccountCredentials, useExisting: AccountsStore },
    AccountsAiDirectory,
    AccountHostResolver,
  ],
  exports: [
    AccountCredentials,
    AccountsStore,
    AccountsAiDirectory,
    AccountsService,
  ],
})
export class AccountsModule {}
