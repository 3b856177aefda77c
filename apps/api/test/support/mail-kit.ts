import { ImapFlow } from 'imapflow';
import { simpleParser, type ParsedMail } from 'mailparser';
import { createTransport, type SendMailOptions } from 'nodemailer';
import type {
  GreenMailServer,
  MailUser,
} from '../../../../tools/mail-servers/mail-servers';

/** Sends real mail into GreenMail over SMTP, logged in as `sender`. */
export async function deliver(
  server: GreenMailServer,
  sender: Required<MailUser>,
  mail: SendMailOptions,
): Promise<void> {
  const transport = createTransport({
    host: server.host,
    port: server.smtpPort,
    secure: false,
    auth: { user: sender.login, pass: sender.password },
  });
  try {
    await transport.sendMail({ from: sender.address, ...mail });
  } finally {
    transport.close();
  }
}

/** A logged-in IMAP session of `user` for checking what the code under test did. */
export async function withImap<T>(
  server: GreenMailServer,
  user: Required<MailUser>,
  work: (client: ImapFlow) => Promise<T>,
): Promise<T> {
  const client = new ImapFlow({
    host: server.host,
    port: server.imapPort,
    secure: false,
    auth: { user: user.login, pass: user.password },
    logger: false,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

export interface StoredMail {
  uid: number;
  flags: string[];
  parsed: ParsedMail;
}

/** Every message in `folder` of `user`'s mailbox, parsed, oldest first. */
export async function mailIn(
  server: GreenMailServer,
  user: Required<MailUser>,
  folder = 'INBOX',
): Promise<StoredMail[]> {
  return withImap(server, user, async (client) => {
    const lock = await client.getMailboxLock(folder);
    try {
      if (!client.mailbox || client.mailbox.exists === 0) return [];
      const raw = await client.fetchAll(
        '1:*',
        { uid: true, flags: true, source: true },
        { uid: false },
      );
      return Promise.all(
        raw.map(async (m) => ({
          uid: m.uid,
          flags: [...(m.flags ?? [])],
          parsed: await simpleParser(m.source as Buffer),
        })),
      );
    } finally {
      lock.release();
    }
  });
}

/** Waits (up to 15 s) until `user`'s folder holds a message `match` accepts; throws with what is there otherwise. */
export async function waitForMail(
  server: GreenMailServer,
  user: Required<MailUser>,
  match: (mail: ParsedMail) => boolean,
  folder = 'INBOX',
): Promise<StoredMail> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const all = await mailIn(server, user, folder);
    const found = all.find((m) => match(m.parsed));
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(
        `no matching mail in ${user.login}/${folder}; subjects: ${all.map((m) => m.parsed.subject).join(' | ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
