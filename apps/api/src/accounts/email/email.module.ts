import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AccountsModule } from '../accounts.module';
import { DraftsController } from './drafts/drafts.controller';
import { DraftsService } from './drafts/drafts.service';
import {
  EmailDraftRecord,
  EmailDraftSchema,
} from './drafts/email-draft.schema';
import { EmailActionsTool } from './email-actions.tool';
import { EmailMode } from './email-mode';
import { ImapPool } from './imap-pool';

/**
 * Email on the owner's own servers: the `email` mode with `email_actions`
 * (imapflow, mailparser, nodemailer), and the drafts unattended turns write
 * instead of sending (`email_drafts`, `/api/drafts`).
 */
@Module({
  imports: [
    AccountsModule,
    MongooseModule.forFeature([
      { name: EmailDraftRecord.name, schema: EmailDraftSchema },
    ]),
  ],
  controllers: [DraftsController],
  providers: [EmailMode, EmailActionsTool, DraftsService, ImapPool],
  exports: [DraftsService],
})
export class EmailModule {}
