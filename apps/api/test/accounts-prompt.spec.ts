import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { AccountDoc } from '../src/accounts/schemas/account.schema';
import { CombinedPromptBuilder } from '../src/system-instruction/combined-prompt.builder';
import { createTestApp, type TestApp } from './support/test-app';

/** The "Accounts" prompt block of the email and calendar modes. */
describe('accounts prompt section', () => {
  let t: TestApp;
  let builder: CombinedPromptBuilder;
  let accounts: Model<AccountDoc>;

  beforeAll(async () => {
    t = await createTestApp();
    builder = t.app.get(CombinedPromptBuilder);
    accounts = t.app.get<Model<AccountDoc>>(getModelToken(AccountDoc.name));
  });
  afterAll(() => t.close());
  beforeEach(() => accounts.deleteMany({}));

  const store = async (name: string, address: string, password: string) => {
    const now = new Date();
    const server = {
      host: '127.0.0.1',
      port: 1,
      secure: false,
      user: address,
      password,
    };
    const doc = await accounts.create({
      kind: 'email',
      name,
      address,
      imap: server,
      smtp: server,
      createdAt: now,
      updatedAt: now,
    });
    return doc._id.toHexString();
  };
  const prompt = async (mode: string, accountId?: string) =>
    (await builder.buildCombinedPrompt({ source: 'chat', mode, accountId })) ??
    '';

  it('says when no account of the kind is connected', async () => {
    expect(await prompt('email')).toContain(
      '## Accounts\nNo email account is connected: the owner adds one on the Accounts page.',
    );
  });

  it('lists the accounts by name and address, marks the one in use, never a server or password', async () => {
    const work = await store('Work', 'ann@work.test', 'pw-work-secret');
    await store('Home', 'ann@home.test', 'pw-home-secret');
    const unselected = await prompt('email');
    expect(unselected).toContain(
      '## Accounts (email)\n- Work <ann@work.test>\n- Home <ann@home.test>\nNone is selected: call select_account before using email_actions.',
    );
    const selected = await prompt('email', work);
    expect(selected).toContain(
      '- Work <ann@work.test> (in use)\n- Home <ann@home.test>\nselect_account switches to another.',
    );
    for (const text of [unselected, selected]) {
      expect(text).not.toContain('pw-work-secret');
      expect(text).not.toContain('127.0.0.1');
    }
  });

  it('uses the only account of a kind without a selection, and stays out of other modes', async () => {
    await store('Work', 'ann@work.test', 'pw');
    expect(await prompt('email')).toContain(
      '## Accounts (email)\n- Work <ann@work.test> (in use)',
    );
    expect(await prompt('calendar')).toContain(
      'No calendar account is connected',
    );
    expect(await prompt('default')).not.toContain('## Accounts');
    expect(await prompt('data')).not.toContain('## Accounts');
  });
});
