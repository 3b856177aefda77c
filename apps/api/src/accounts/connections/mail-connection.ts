// Loaded at the first connection (imapflow alone is about 0.1 s of start-up): `import type` here.
import type { ImapFlow } from 'imapflow';
import type { Transporter } from 'nodemailer';
import type { MailServerInput } from '@metatronos/shared-types';
import {
  AccountAddressRefused,
  checkServerHost,
  type CheckedServerHost,
} from './account-address';
import { maskSecrets } from './secret-text';

/** Connect, greeting and idle-socket limits for the owner's mail servers. */
export const MAIL_CONNECT_TIMEOUT_MS = 15_000;
export const MAIL_SOCKET_TIMEOUT_MS = 60_000;

/**
 * An IMAP client for one account's server, not yet connected, pinned to the
 * checked address (TLS still verifies the certificate against the host name).
 * Logging is off (the library's logs would carry mailbox contents).
 */
function imapClient(
  sdk: typeof import('imapflow'),
  server: MailServerInput,
  to: CheckedServerHost,
): ImapFlow {
  return new sdk.ImapFlow({
    host: to.address,
    servername: to.servername,
    port: server.port,
    secure: server.secure,
    auth: { user: server.user, pass: server.password },
    logger: false,
    connectionTimeout: MAIL_CONNECT_TIMEOUT_MS,
    greetingTimeout: MAIL_CONNECT_TIMEOUT_MS,
    socketTimeout: MAIL_SOCKET_TIMEOUT_MS,
    disableAutoIdle: true,
    tls: { rejectUnauthorized: true },
  });
}

/** Connects and logs in; throws a MailConnectionError naming the problem. */
export async function openImap(server: MailServerInput): Promise<ImapFlow> {
  const client = imapClient(
    await import('imapflow'),
    server,
    await checkedHost('IMAP', server),
  );
  // An error event after connect (socket drop) must not crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return client;
  } catch (error) {
    client.close();
    throw new MailConnectionError(describeMailError('IMAP', server, error));
  }
}

/**
 * The server's checked address; a refusal or a DNS failure becomes a
 * MailConnectionError in the owner's words, before any connection.
 */
async function checkedHost(
  protocol: 'IMAP' | 'SMTP',
  server: MailServerInput,
): Promise<CheckedServerHost> {
  try {
    return await checkServerHost(server.host, `${protocol} server`);
  } catch (error) {
    throw new MailConnectionError(
      error instanceof AccountAddressRefused
        ? error.message
        : describeMailError(protocol, server, error),
    );
  }
}

/**
 * An SMTP transport for one account's server (pooled off; one message per
 * call), pinned to the checked address like IMAP; throws a MailConnectionError
 * when the address is refused.
 */
export async function smtpTransport(
  server: MailServerInput,
): Promise<Transporter> {
  const to = await checkedHost('SMTP', server);
  const { createTransport } = await import('nodemailer');
  return createTransport({
    host: to.address,
    servername: to.servername,
    port: server.port,
    secure: server.secure,
    auth: { user: server.user, pass: server.password },
    logger: false,
    debug: false,
    connectionTimeout: MAIL_CONNECT_TIMEOUT_MS,
    greetingTimeout: MAIL_CONNECT_TIMEOUT_MS,
    socketTimeout: MAIL_SOCKET_TIMEOUT_MS,
    tls: { rejectUnauthorized: true },
  });
}

/** Connects and authenticates to the SMTP server without sending; throws a MailConnectionError. */
export async function verifySmtp(server: MailServerInput): Promise<void> {
  const transport = await smtpTransport(server);
  try {
    await transport.verify();
  } catch (error) {
    throw new MailConnectionError(describeMailError('SMTP', server, error));
  } finally {
    transport.close();
  }
}

/** A connection problem in words for the owner (never holding the password). */
export class MailConnectionError extends Error {}

interface ErrorLike {
  code?: string;
  message?: string;
  authenticationFailed?: boolean;
  responseText?: string;
  responseCode?: number;
  response?: string;
}

/** "IMAP login failed at imap.example.com:993 …" from an imapflow / nodemailer / socket error. */
export function describeMailError(
  protocol: 'IMAP' | 'SMTP',
  server: Pick<MailServerInput, 'host' | 'port' | 'secure' | 'user'> &
    Partial<Pick<MailServerInput, 'password'>>,
  error: unknown,
): string {
  const e = (error ?? {}) as ErrorLike;
  const where = `${protocol} server ${server.host}:${server.port}`;
  const code = maskSecrets(e.code ?? '', [server.password]);
  // The server's own words (never our sentence around them) lose any echo of the password.
  const detail = maskSecrets(
    (e.responseText ?? e.response ?? e.message ?? '').trim(),
    [server.password],
  );
  if (e.authenticationFailed || code === 'EAUTH' || e.responseCode === 535)
    return `${protocol} login failed for '${server.user}' at ${server.host}:${server.port}: wrong user name or password${detail ? ` (${detail})` : ''}.`;
  if (code === 'ECONNREFUSED')
    return `Cannot reach the ${where}: connection refused.`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `Cannot reach the ${where}: unknown host.`;
  if (
    code === 'ETIMEDOUT' ||
    code === 'ETIMEOUT' ||
    code === 'CONNECT_TIMEOUT' ||
    code === 'GREETING_TIMEOUT' ||
    /timed? ?out/i.test(detail)
  )
    return `The ${where} did not answer in time${server.secure ? ' (is TLS on this port? try secure: false with STARTTLS ports)' : ' (does this port expect TLS? try secure: true)'}.`;
  if (/wrong version number|packet length too long/i.test(detail))
    return `TLS with the ${where} failed: the server does not speak TLS on this port (for a plain or STARTTLS port such as 143 or 587, set secure: false).`;
  if (
    /self[- ]signed|unable to (get|verify)|certificate/i.test(
      `${code} ${detail}`,
    )
  )
    return `TLS with the ${where} failed: its certificate is not trusted (${code || detail}).`;
  if (/SSL|TLS/i.test(`${code} ${detail}`))
    return `TLS with the ${where} failed: ${code || detail}.`;
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNECTION')
    return `The ${where} closed the connection${server.secure ? '' : ' (does this port expect TLS? try secure: true)'}.`;
  return `The ${where} refused the connection: ${detail || code || 'unknown error'}.`;
}
