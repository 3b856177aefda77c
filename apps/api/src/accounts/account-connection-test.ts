import { Injectable } from '@nestjs/common';
import type { AccountTestResult } from '@metatronos/shared-types';
import { withoutPasswords, type AccountRecord } from './account-records';
import {
  CalDavConnectionError,
  openCalDav,
} from './connections/caldav-connection';
import {
  MailConnectionError,
  openImap,
  verifySmtp,
} from './connections/mail-connection';

/** A connection that did not work, in words for the owner; never holding a password. */
export class AccountConnectionError extends Error {}

/**
 * Logs in once with an account's settings: IMAP and SMTP for email (nothing is
 * sent), principal and calendar discovery for CalDAV. Tests hand in another one.
 */
@Injectable()
export class AccountConnectionTester {
  async test(record: AccountRecord): Promise<AccountTestResult> {
    try {
      return record.kind === 'email'
        ? await this.testEmail(record)
        : await this.testCalendar(record);
    } catch (error) {
      const known =
        error instanceof MailConnectionError ||
        error instanceof CalDavConnectionError;
      // A known error is already in our words with the server's masked; an unknown one is raw text.
      throw new AccountConnectionError(
        known
          ? error.message
          : `The connection test failed: ${withoutPasswords(error instanceof Error ? error.message : 'unknown error', record)}.`,
      );
    }
  }

  private async testEmail(
    record: Extract<AccountRecord, { kind: 'email' }>,
  ): Promise<AccountTestResult> {
    const imap = await openImap(record.imap);
    let folders = 0;
    try {
      folders = (await imap.list()).length;
    } finally {
      await imap.logout().catch(() => imap.close());
    }
    await verifySmtp(record.smtp);
    return {
      ok: true,
      detail: `IMAP login succeeded (${folders} folder${folders === 1 ? '' : 's'}) and SMTP login succeeded.`,
    };
  }

  private async testCalendar(
    record: Extract<AccountRecord, { kind: 'calendar' }>,
  ): Promise<AccountTestResult> {
    const client = await openCalDav(record);
    let calendars = 0;
    try {
      calendars = (await client.fetchCalendars()).length;
    } catch (error) {
      throw new CalDavConnectionError(
        `Logged in to ${record.url}, but listing the calendars failed: ${error instanceof Error ? error.message : 'unknown error'}.`,
      );
    }
    return {
      ok: true,
      detail:
        calendars === 0
          ? 'CalDAV login succeeded; the account has no calendar yet (Metatron creates one when it first adds an event).'
          : `CalDAV login succeeded (${calendars} calendar${calendars === 1 ? '' : 's'}).`,
    };
  }
}
