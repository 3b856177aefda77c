import type { AccountKind, MailServerInput } from '@metatronos/shared-types';
import type { AiToolContext } from '../ai-tools/ai-tool';
import { maskSecrets } from './connections/secret-text';

/**
 * Stored accounts (with their passwords). The `auth_` prefix keeps the collection
 * invisible to the AI's database tool and the console's data browser.
 */
export const ACCOUNTS_COLLECTION = 'auth_accounts';

export interface EmailAccountRecord {
  id: string;
  kind: 'email';
  name: string;
  address: string;
  imap: MailServerInput;
  smtp: MailServerInput;
}

export interface CalendarAccountRecord {
  id: string;
  kind: 'calendar';
  name: string;
  url: string;
  user: string;
  password: string;
  /** false: the owner chose a plain http:// URL explicitly. */
  secure: boolean;
}

export type AccountRecord = EmailAccountRecord | CalendarAccountRecord;

/**
 * Read access to stored accounts with their passwords, for the code that connects
 * (email and calendar tools, the new-mail watcher). Provided by AccountsModule.
 * Nothing from here may reach a model request, a tool result, a log line or a response.
 */
export abstract class AccountCredentials {
  abstract get(id: string): Promise<AccountRecord | null>;
  abstract list(kind?: AccountKind): Promise<AccountRecord[]>;
}

/**
 * The account of `kind` a turn works on: the conversation's selected one, else the only
 * account of that kind. A string is the tool error to return instead.
 */
export async function accountForTurn<K extends AccountKind>(
  credentials: AccountCredentials,
  context: AiToolContext,
  kind: K,
): Promise<Extract<AccountRecord, { kind: K }> | string> {
  const all = (await credentials.list(kind)).filter(
    (a): a is Extract<AccountRecord, { kind: K }> => a.kind === kind,
  );
  const selectedId = context.conversation?.accountId ?? null;
  if (selectedId) {
    const selected = all.find((a) => a.id === selectedId);
    if (selected) return selected;
  }
  if (all.length === 1) return all[0];
  if (all.length === 0) return `No ${kind} account is connected.`;
  const names = all.map((a: AccountRecord) =>
    a.kind === 'email' ? a.address : a.name,
  );
  return `Several ${kind} accounts are connected: call select_account with one of: ${names.join(', ')}.`;
}

/** `maskSecrets` with the account's passwords: for a server's or library's raw text, never our own wording. */
export function withoutPasswords(text: string, account: AccountRecord): string {
  return maskSecrets(
    text,
    account.kind === 'email'
      ? [account.imap.password, account.smtp.password]
      : [account.password],
  );
}

/** Why a tool of an account kind is not offered: no account of that kind yet (`null` once there is one). */
export async function missingAccountReason(
  credentials: AccountCredentials,
  kind: AccountKind,
): Promise<string | null> {
  return (await credentials.list(kind)).length > 0
    ? null
    : `No ${kind} account is connected yet.`;
}
