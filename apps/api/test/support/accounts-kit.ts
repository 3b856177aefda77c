import type { INestApplication } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type {
  GreenMailServer,
  MailUser,
  RadicaleServer,
} from '../../../../tools/mail-servers/mail-servers';
import { AccountDoc } from '../../src/accounts/schemas/account.schema';

/**
 * Stores an account straight in `auth_accounts`, for specs of the code that uses
 * accounts (tools, drafts, watchers). The REST route (which tests the connection
 * first) has its own spec.
 */
export async function storeEmailAccount(
  app: INestApplication,
  server: GreenMailServer,
  user: Required<MailUser>,
  name = user.login,
): Promise<string> {
  const model = app.get<Model<AccountDoc>>(getModelToken(AccountDoc.name));
  const now = new Date();
  const login = {
    host: server.host,
    user: user.login,
    password: user.password,
    secure: false,
  };
  const doc = await model.create({
    kind: 'email',
    name,
    address: user.address,
    imap: { ...login, port: server.imapPort },
    smtp: { ...login, port: server.smtpPort },
    createdAt: now,
    updatedAt: now,
  });
  return doc._id.toHexString();
}

export async function storeCalendarAccount(
  app: INestApplication,
  server: RadicaleServer,
  user: MailUser,
  name = `${user.login} calendar`,
): Promise<string> {
  const model = app.get<Model<AccountDoc>>(getModelToken(AccountDoc.name));
  const now = new Date();
  const doc = await model.create({
    kind: 'calendar',
    name,
    address: user.login,
    url: server.url,
    user: user.login,
    password: user.password,
    secure: false,
    createdAt: now,
    updatedAt: now,
  });
  return doc._id.toHexString();
}
