import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AI_ACCOUNT_DIRECTORY,
  AiToolProvider,
  META_MODE,
  toolError,
  type AiAccountDirectory,
  type AiTool,
  type AiToolContext,
} from '../ai-tool';
import { AiToolRegistry } from '../ai-tool-registry';

const SELECT_ACCOUNT_ARGS = z.object({
  account: z
    .string()
    .min(1)
    .max(200)
    .describe("The account's address, name or id"),
});

/**
 * `select_account({ account })`: picks the account the current mode works on
 * (email, calendar); kept with the conversation. Offered once any account exists.
 */
@AiToolProvider()
@Injectable()
export class SelectAccountTool implements AiTool<typeof SELECT_ACCOUNT_ARGS> {
  readonly name = 'select_account';
  readonly modes = [META_MODE];
  readonly description =
    'Choose the account (email or calendar) this conversation works with.';
  readonly schema = SELECT_ACCOUNT_ARGS;
  readonly promptLine = 'choose the account the current mode works with.';

  constructor(
    @Inject(AI_ACCOUNT_DIRECTORY)
    private readonly accounts: AiAccountDirectory,
    private readonly registry: AiToolRegistry,
  ) {}

  async isAvailable(): Promise<boolean> {
    return (await this.accounts.list()).length > 0;
  }

  async unavailableReason(): Promise<string | null> {
    return (await this.isAvailable()) ? null : 'No account is connected yet.';
  }

  async execute(
    { account }: z.output<typeof SELECT_ACCOUNT_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    const conversation = context.conversation;
    if (!conversation)
      return toolError('Accounts cannot be chosen in this reply.');
    const kind = this.registry
      .modes()
      .find((m) => m.name === conversation.mode)?.accountKind;
    const wanted = account.trim().toLowerCase();
    const candidates = await this.accounts.list(kind);
    const match = candidates.find((a) =>
      [a.id, a.address, a.name].some((v) => v.toLowerCase() === wanted),
    );
    if (!match)
      return toolError(
        candidates.length
          ? `No ${kind ?? ''} account '${account}'. Accounts: ${candidates.map((a) => a.address).join(', ')}`.replace(
              /\s+/g,
              ' ',
            )
          : `No ${kind ? `${kind} ` : ''}account is connected.`,
      );
    await conversation.selectAccount(match.id);
    return JSON.stringify({
      success: true,
      account: {
        id: match.id,
        kind: match.kind,
        name: match.name,
        address: match.address,
      },
    });
  }
}
