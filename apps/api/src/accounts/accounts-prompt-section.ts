import { Injectable } from '@nestjs/common';
import { OWNER_AND_UNATTENDED } from '../system-instruction/prompt-audience';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../system-instruction/prompt-section';
import { AccountsAiDirectory } from './accounts-store';

/**
 * "## Accounts" in the email and calendar modes: the accounts of the mode's kind by
 * name and address (never a server or password), and which one the tools act on.
 * The modes are named after the account kinds they work on.
 */
@PromptSectionProvider()
@Injectable()
export class AccountsPromptSection implements PromptSection {
  readonly id = 'accounts';
  readonly order = 62;
  readonly modes = ['email', 'calendar'];
  readonly audiences = OWNER_AND_UNATTENDED;

  constructor(private readonly directory: AccountsAiDirectory) {}

  async render(context: PromptContext): Promise<string | null> {
    const kind = context.mode;
    if (kind !== 'email' && kind !== 'calendar') return null;
    const accounts = await this.directory.list(kind);
    if (accounts.length === 0)
      return `## Accounts\nNo ${kind} account is connected: the owner adds one on the Accounts page.`;
    const selected =
      accounts.length === 1
        ? accounts[0]
        : accounts.find((a) => a.id === context.accountId);
    const lines = accounts.map(
      (a) => `- ${a.name} <${a.address}>${a === selected ? ' (in use)' : ''}`,
    );
    const hint = selected
      ? accounts.length > 1
        ? 'select_account switches to another.'
        : ''
      : `None is selected: call select_account before using ${kind === 'email' ? 'email_actions' : 'calendar_actions'}.`;
    return [`## Accounts (${kind})`, ...lines, hint].filter(Boolean).join('\n');
  }
}
