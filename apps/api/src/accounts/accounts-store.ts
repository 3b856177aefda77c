import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, type Model } from 'mongoose';
import type { AccountKind } from '@metatronos/shared-types';
import type { AiAccount, AiAccountDirectory } from '../ai-tools/ai-tool';
import { AccountCredentials, type AccountRecord } from './account-records';
import { AccountDoc, accountWrites } from './schemas/account.schema';

/** A stored document as the connecting code needs it (with passwords). */
export function toAccountRecord(doc: AccountDoc): AccountRecord {
  const id = doc._id.toHexString();
  if (doc.kind === 'email')
    return {
      id,
      kind: 'email',
      name: doc.name,
      address: doc.address,
      imap: doc.imap ? { ...doc.imap } : doc.imap!,
      smtp: doc.smtp ? { ...doc.smtp } : doc.smtp!,
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

/**
 * Reads stored accounts: the credentials port and the AI's account directory (no secrets in the latter).
 * The accounts are read once and kept until a write: every model call asks which tools are available,
 * and the email, calendar and select_account tools each look at the accounts for that. A write through
 * the model (counted by the schema), `accounts.changed` and a restored backup make the copy stale.
 */
@Injectable()
export class AccountsStore extends AccountCredentials {
  private copy: { generation: number; docs: Promise<AccountDoc[]> } | null =
    null;

  constructor(
    @InjectModel(AccountDoc.name) private readonly accounts: Model<AccountDoc>,
  ) {
    super();
  }

  @OnEvent('accounts.changed')
  @OnEvent('backup.restored')
  forget(): void {
    this.copy = null;
  }

  async get(id: string): Promise<AccountRecord | null> {
    if (!isValidObjectId(id)) return null;
    const doc = (await this.all()).find((d) => d._id.toHexString() === id);
    return doc ? toAccountRecord(doc) : null;
  }

  async list(kind?: AccountKind | string): Promise<AccountRecord[]> {
    const docs = await this.all();
    return (kind ? docs.filter((d) => d.kind === kind) : docs).map(
      toAccountRecord,
    );
  }

  /** Every account, oldest first: the kept copy unless a write came since it was read. */
  private all(): Promise<AccountDoc[]> {
    const { generation } = accountWrites;
    if (this.copy?.generation === generation) return this.copy.docs;
    const docs = this.accounts
      .find({})
      .sort({ createdAt: 1 })
      .lean<AccountDoc[]>()
      .exec();
    const copy = { generation, docs };
    this.copy = copy;
    // A failed read is not kept.
    docs.catch(() => {
      if (this.copy === copy) this.copy = null;
    });
    return docs;
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
