import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, type Model } from 'mongoose';
import type { AccountKind } from '@metatronos/shared-types';
import type { AiAccount, AiAccountDirectory } from '../ai-tools/ai-tool';
import { AccountCredentials, type AccountRecord } from './account-records';
import { AccountDoc } from './schemas/account.schema';

/** A stored document as the connecting code needs it (with passwords). */
export function toAccountRecord(doc: AccountDoc): AccountRecord {
  const id = doc._id.toHexString();
  if (doc.kind === 'email')
    return {
      id,
      kind: 'email',
      name: doc.name,
      address: doc.address,
      imap: doc.imap!,
      smtp: doc.smtp!,
    };
  return {
    id,
    kind: 'calendar',
    name: doc.name,
    url: doc.url ?? '',
    user: doc.user ?? '',
    password: doc.password ?? '',
    secure: doc.secure !== false,
  };
}

/** Reads stored accounts: the credentials port and the AI's account directory (no secrets in the latter). */
@Injectable()
export class AccountsStore extends AccountCredentials {
  constructor(
    @InjectModel(AccountDoc.name) private readonly accounts: Model<AccountDoc>,
  ) {
    super();
  }

  async get(id: string): Promise<AccountRecord | null> {
    if (!isValidObjectId(id)) return null;
    const doc = await this.accounts.findById(id).lean<AccountDoc>().exec();
    return doc ? toAccountRecord(doc) : null;
  }

  async list(kind?: AccountKind | string): Promise<AccountRecord[]> {
    const docs = await this.accounts
      .find(kind ? { kind } : {})
      .sort({ createdAt: 1 })
      .lean<AccountDoc[]>()
      .exec();
    return docs.map(toAccountRecord);
  }
}

/** The accounts as select_account matches and shows them (never a password). */
@Injectable()
export class AccountsAiDirectory implements AiAccountDirectory {
  constructor(private readonly store: AccountsStore) {}

  async list(kind?: string): Promise<AiAccount[]> {
    return (await this.store.list(kind)).map((a) => ({
      id: a.id,
      kind: a.kind,
      name: a.name,
      address: a.kind === 'email' ? a.address : a.user,
    }));
  }
}
