import { withoutPasswords, type EmailAccountRecord } from '../account-records';
import {
  describeMailError,
  MailConnectionError,
  smtpTransport,
} from '../connections/mail-connection';

/** A message to send from an account: a new one, or a reply carrying its thread's headers. */
export interface OutgoingEmail {
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  /** The Message-ID replied to (sets In-Reply-To). */
  inReplyTo: string | null;
  /** The thread's Message-IDs, oldest first, ending with inReplyTo. */
  references: string[];
}

export interface SentEmail {
  messageId: string;
  accepted: string[];
  rejected: string[];
}

/**
 * Why a send failed, in words without the password. `recipients`: the server
 * refused the addresses (the owner can fix them); `server`: login, connection or
 * the server itself.
 */
export class EmailSendError extends Error {
  constructor(
    message: string,
    readonly kind: 'recipients' | 'server',
  ) {
    super(message);
  }
}

interface SmtpErrorLike {
  code?: string;
  rejected?: unknown;
}

interface SmtpSentInfo {
  messageId?: string;
  accepted?: unknown[];
  rejected?: unknown[];
}

function addressList(values: unknown[] | undefined): string[] {
  return (values ?? []).map((v) =>
    typeof v === 'string'
      ? v
      : String((v as { address?: string }).address ?? ''),
  );
}

/** Sends one message through the account's SMTP server (nodemailer builds the MIME and the headers). */
export async function sendEmail(
  account: EmailAccountRecord,
  email: OutgoingEmail,
  signal?: AbortSignal,
): Promise<SentEmail> {
  if (signal?.aborted)
    throw new EmailSendError('The request was stopped.', 'server');
  let transport: Awaited<ReturnType<typeof smtpTransport>>;
  try {
    transport = await smtpTransport(account.smtp);
  } catch (error) {
    // A refused or unknown server address: nothing was sent.
    if (error instanceof MailConnectionError)
      throw new EmailSendError(error.message, 'server');
    throw error;
  }
  const abort = () => transport.close();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const info = (await transport.sendMail({
      from: account.address,
      to: email.to,
      cc: email.cc.length ? email.cc : undefined,
      subject: email.subject,
      text: email.text,
      inReplyTo: email.inReplyTo ?? undefined,
      references: email.references.length ? email.references : undefined,
    })) as SmtpSentInfo;
    return {
      messageId: info.messageId ?? '',
      accepted: addressList(info.accepted),
      rejected: addressList(info.rejected),
    };
  } catch (error) {
    if (signal?.aborted)
      throw new EmailSendError('The request was stopped.', 'server');
    const code = (error as SmtpErrorLike).code;
    if (code === 'EENVELOPE')
      throw new EmailSendError(
        `The SMTP server ${account.smtp.host}:${account.smtp.port} refused the recipients: ${withoutPasswords((error as Error).message, account)}`,
        'recipients',
      );
    throw new EmailSendError(
      describeMailError('SMTP', account.smtp, error),
      'server',
    );
  } finally {
    signal?.removeEventListener('abort', abort);
    transport.close();
  }
}
