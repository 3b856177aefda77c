import type {
  ActionEffect,
  ActionSource,
  TaintMark,
} from '@metatronos/shared-types';
import {
  decideToolCall,
  sendLimitText,
  taintReasonText,
  type ActionPolicyInput,
} from './action-policy';

const PAGE: TaintMark = {
  by: 'url_fetch',
  text: 'a web page from example.org',
  at: '2026-01-01T00:00:00.000Z',
};

function input(over: Partial<ActionPolicyInput>): ActionPolicyInput {
  return {
    tool: 'whatsapp_send_message',
    effect: 'send',
    source: 'chat',
    taint: [],
    alwaysConfirm: false,
    actOnOwnTools: [],
    sendsSoFar: 0,
    ...over,
  };
}

type Expect = 'run' | 'pending' | 'refuse';
const EFFECTS: ActionEffect[] = [
  'send',
  'grant',
  'delete',
  'move',
  'schedule',
  'memory',
  'fetch',
];
const UNATTENDED: ActionSource[] = ['cron', 'pulse', 'auto-reply'];
const ATTENDED: ActionSource[] = ['chat', 'voice'];

describe('decideToolCall', () => {
  // [source, effect, tainted, alwaysConfirm, expected]
  const table: Array<
    [ActionSource, ActionEffect | null, boolean, boolean, Expect]
  > = [];
  for (const source of ATTENDED)
    for (const effect of EFFECTS) {
      const spoken =
        source === 'voice' && (effect === 'send' || effect === 'delete');
      table.push([source, effect, false, false, spoken ? 'pending' : 'run']);
      table.push([
        source,
        effect,
        false,
        true,
        effect === 'send' || effect === 'delete' ? 'pending' : 'run',
      ]);
      table.push([source, effect, true, false, 'pending']);
    }
  for (const source of UNATTENDED)
    for (const effect of EFFECTS) {
      const untainted: Expect =
        effect === 'grant'
          ? 'refuse'
          : ['send', 'delete', 'move'].includes(effect)
            ? 'pending'
            : 'run';
      table.push([source, effect, false, false, untainted]);
      table.push([source, effect, false, true, untainted]);
      table.push([
        source,
        effect,
        true,
        false,
        effect === 'grant' ? 'refuse' : 'pending',
      ]);
    }
  // Another agent (MCP) only reads: every effect is refused, whatever else holds (owner's job consent included).
  for (const effect of EFFECTS)
    for (const tainted of [false, true])
      for (const alwaysConfirm of [false, true])
        table.push(['mcp', effect, tainted, alwaysConfirm, 'refuse']);
  for (const source of [...ATTENDED, ...UNATTENDED, 'mcp' as const])
    for (const tainted of [false, true])
      table.push([source, null, tainted, true, 'run']);

  it.each(table)(
    '%s · %s · tainted %s · alwaysConfirm %s → %s',
    (source, effect, tainted, alwaysConfirm, expected) => {
      const decision = decideToolCall(
        input({
          source,
          effect,
          taint: tainted ? [PAGE] : [],
          alwaysConfirm,
        }),
      );
      expect(decision.kind).toBe(expected);
    },
  );

  it('refuses an outward effect from a connected agent even with the tool allowed for a job', () => {
    expect(
      decideToolCall(
        input({
          source: 'mcp',
          effect: 'send',
          actOnOwnTools: ['whatsapp_send_message'],
        }),
      ),
    ).toEqual({
      kind: 'refuse',
      reason:
        'this whatsapp_send_message call has an outward effect (send): a connected agent (MCP) may only read',
    });
  });

  it('names why a call waits', () => {
    expect(decideToolCall(input({ taint: [PAGE] }))).toEqual({
      kind: 'pending',
      reason: {
        kind: 'tainted',
        text: 'this turn read a web page from example.org',
      },
    });
    expect(decideToolCall(input({ source: 'cron' }))).toMatchObject({
      kind: 'pending',
      reason: { kind: 'unattended' },
    });
    expect(decideToolCall(input({ alwaysConfirm: true }))).toMatchObject({
      kind: 'pending',
      reason: { kind: 'always-confirm' },
    });
    // In a call a send waits for a spoken yes, but a marked call's is the console's to approve.
    expect(decideToolCall(input({ source: 'voice' }))).toMatchObject({
      kind: 'pending',
      reason: { kind: 'spoken' },
    });
    expect(
      decideToolCall(input({ source: 'voice', taint: [PAGE] })),
    ).toMatchObject({ kind: 'pending', reason: { kind: 'tainted' } });
  });

  it.each(UNATTENDED)(
    '%s: a tool the owner let the job use on its own runs, tainted or not; grants never',
    (source) => {
      for (const effect of ['send', 'delete', 'move'] as const)
        for (const taint of [[], [PAGE]])
          expect(
            decideToolCall(
              input({
                source,
                effect,
                taint,
                actOnOwnTools: ['whatsapp_send_message'],
              }),
            ),
          ).toEqual({ kind: 'run', onOwn: true });
      expect(
        decideToolCall(
          input({
            source,
            tool: 'whatsapp_manage_permission',
            effect: 'grant',
            actOnOwnTools: ['whatsapp_manage_permission'],
          }),
        ).kind,
      ).toBe('refuse');
      // Another tool of the same effect is not covered by the consent.
      expect(
        decideToolCall(
          input({
            source,
            tool: 'telegram_send_file',
            actOnOwnTools: ['whatsapp_send_message'],
          }),
        ).kind,
      ).toBe('pending');
    },
  );

  it.each([
    [0, 'run'],
    [2, 'run'],
    [3, 'refuse'],
    [7, 'refuse'],
  ] as const)(
    'an unattended run that sent %i times: the next send → %s, whatever the tool',
    (sendsSoFar, expected) => {
      for (const tool of ['contacts_send', 'whatsapp_send_message'])
        expect(
          decideToolCall(
            input({
              source: 'cron',
              tool,
              sendsSoFar,
              actOnOwnTools: [tool],
            }),
          ),
        ).toEqual(
          expected === 'run'
            ? { kind: 'run', onOwn: true }
            : { kind: 'refuse', reason: sendLimitText() },
        );
      // The limit counts queued sends too: a fourth pending one is refused.
      expect(decideToolCall(input({ source: 'pulse', sendsSoFar })).kind).toBe(
        expected === 'run' ? 'pending' : 'refuse',
      );
    },
  );

  it('the owner chat is not capped', () => {
    expect(decideToolCall(input({ sendsSoFar: 50 })).kind).toBe('run');
  });

  it('a tool with its own unattended queue (email drafts) runs to queue it, within the limit', () => {
    const email = { tool: 'email_actions', queuesUnattendedSends: true };
    expect(
      decideToolCall(input({ ...email, source: 'cron', taint: [PAGE] })).kind,
    ).toBe('run');
    expect(
      decideToolCall(input({ ...email, source: 'cron', sendsSoFar: 3 })).kind,
    ).toBe('refuse');
    // Attended and tainted: the queue does not apply, the call waits.
    expect(decideToolCall(input({ ...email, taint: [PAGE] })).kind).toBe(
      'pending',
    );
    expect(
      decideToolCall(input({ ...email, source: 'cron', effect: 'move' })).kind,
    ).toBe('pending');
  });

  it('says what marked the turn', () => {
    expect(taintReasonText([PAGE])).toBe(
      'this turn read a web page from example.org',
    );
    expect(
      taintReasonText([
        PAGE,
        { ...PAGE, by: 'email_actions', text: 'an email from ann@example.org' },
      ]),
    ).toBe(
      'this turn read a web page from example.org and an email from ann@example.org',
    );
  });
});
