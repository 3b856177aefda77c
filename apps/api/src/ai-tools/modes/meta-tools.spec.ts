import { Injectable } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AppSettings } from '../../settings/settings.service';
import {
  AI_ACCOUNT_DIRECTORY,
  type AiAccount,
  type AiAccountDirectory,
  type AiTool,
  type AiToolContext,
  type ConversationModeControl,
} from '../ai-tool';
import { AiToolRegistry } from '../ai-tool-registry';
import { DataMode, DefaultMode } from './core-modes';
import { SelectAccountTool } from './select-account.tool';
import { SetModeTool } from './set-mode.tool';

@Injectable()
class TestAccounts implements AiAccountDirectory {
  accounts: AiAccount[] = [];
  async list(kind?: string): Promise<AiAccount[]> {
    return this.accounts.filter((a) => !kind || a.kind === kind);
  }
}

/** A conversation that records what the meta tools changed. */
function conversation(mode = 'default'): ConversationModeControl & {
  changes: string[];
} {
  const state = { mode, accountId: null as string | null };
  const changes: string[] = [];
  return {
    changes,
    get mode() {
      return state.mode;
    },
    get accountId() {
      return state.accountId;
    },
    setMode: async (next) => {
      state.mode = next;
      changes.push(`mode:${next}`);
    },
    selectAccount: async (id) => {
      state.accountId = id;
      changes.push(`account:${id}`);
    },
  };
}

describe('meta tools', () => {
  let registry: AiToolRegistry;
  let accounts: TestAccounts;
  const context = (control?: ConversationModeControl): AiToolContext => ({
    source: 'chat',
    settings: { disabledTools: [] } as unknown as AppSettings,
    chatId: null,
    messageId: null,
    signal: new AbortController().signal,
    conversation: control,
  });

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        AiToolRegistry,
        DefaultMode,
        DataMode,
        SetModeTool,
        SelectAccountTool,
        TestAccounts,
        { provide: AI_ACCOUNT_DIRECTORY, useExisting: TestAccounts },
      ],
    }).compile();
    await moduleRef.init();
    registry = moduleRef.get(AiToolRegistry);
    accounts = moduleRef.get(TestAccounts);
  });

  it('gives set_mode the registered modes as an enum, each described in one line', () => {
    const spec = registry.specsOf([registry.tool('set_mode') as AiTool])[0];
    expect(spec.parameters.properties).toEqual({
      mode: { type: 'string', enum: ['default', 'data'] },
    });
    expect(spec.description).toContain(
      '\ndata: your database: profile, contacts, schedule, ai_ collections',
    );
  });

  it('switches with set_mode, says when the mode is already on, and refuses a mode that does not exist', async () => {
    const control = conversation();
    expect(
      JSON.parse(
        await registry.execute('set_mode', { mode: 'data' }, context(control)),
      ),
    ).toMatchObject({
      success: true,
      mode: 'data',
      message: 'Switched to Data mode.',
    });
    expect(
      JSON.parse(
        await registry.execute('set_mode', { mode: 'data' }, context(control)),
      ),
    ).toMatchObject({ message: 'Already in Data mode.' });
    expect(
      JSON.parse(
        await registry.execute('set_mode', { mode: 'email' }, context(control)),
      ).error,
    ).toContain('mode');
    expect(control.changes).toEqual(['mode:data']);
  });

  it('offers select_account only once an account exists, and stores the one it matches', async () => {
    const control = conversation();
    expect(
      (await registry.toolsFor(context(control), { mode: 'default' })).map(
        (t) => t.name,
      ),
    ).toEqual(['set_mode']);
    expect(
      JSON.parse(
        await registry.execute(
          'select_account',
          { account: 'x' },
          context(control),
        ),
      ),
    ).toEqual({ error: "Unknown or unavailable tool 'select_account'" });

    accounts.accounts = [
      { id: 'a1', kind: 'email', name: 'Work', address: 'me@work.example' },
      { id: 'a2', kind: 'email', name: 'Home', address: 'me@home.example' },
    ];
    expect(
      (await registry.toolsFor(context(control), { mode: 'default' })).map(
        (t) => t.name,
      ),
    ).toEqual(['set_mode', 'select_account']);
    expect(
      JSON.parse(
        await registry.execute(
          'select_account',
          { account: 'ME@home.example' },
          context(control),
        ),
      ),
    ).toEqual({
      success: true,
      account: {
        id: 'a2',
        kind: 'email',
        name: 'Home',
        address: 'me@home.example',
      },
    });
    expect(
      JSON.parse(
        await registry.execute(
          'select_account',
          { account: 'nobody' },
          context(control),
        ),
      ).error,
    ).toBe("No account 'nobody'. Accounts: me@work.example, me@home.example");
    expect(control.changes).toEqual(['account:a2']);
  });
});
