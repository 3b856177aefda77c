import { PASSWORD_MASK } from '@metatronos/shared-types';
import type { EmailAccountRecord } from '../account-records';

/**
 * A server's error text with the account's passwords replaced by the mask. The
 * libraries do not echo passwords as far as we know; this is the belt to that
 * braces, since error texts go to the model, the console and the log.
 */
export function withoutPasswords(
  text: string,
  account: Pick<EmailAccountRecord, 'imap' | 'smtp'>,
): string {
  let scrubbed = text;
  for (const password of [account.imap.password, account.smtp.password]) {
    if (password) scrubbed = scrubbed.split(password).join(PASSWORD_MASK);
  }
  return scrubbed;
}
