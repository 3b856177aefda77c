import {
  MAX_SENDS_PER_UNATTENDED_RUN,
  type ActionEffect,
  type ActionReason,
  type ActionSource,
  type TaintMark,
} from '@metatronos/shared-types';

/**
 * The action policy: for one tool call, whether it runs, waits for the owner as a
 * pending action, or is refused. A pure function of what the call does and of the
 * turn it comes from, so every rule is checked by a table (action-policy.spec.ts)
 * and every caller (the LLM runner, voice) gets the same answer through
 * `AiToolRegistry.execute`. Tools only declare their effect; none decides here.
 */

export type ActionDecision =
  | {
      kind: 'run';
      /** Ran because the owner allowed the tool for this job. */ onOwn?: boolean;
    }
  | { kind: 'pending'; reason: ActionReason }
  | { kind: 'refuse'; reason: string };

export interface ActionPolicyInput {
  tool: string;
  /** What the call does (the tool's `effect(args)`); null: nothing outward. */
  effect: ActionEffect | null;
  source: ActionSource;
  /** What marked the turn as having read third-party content (empty: nothing). */
  taint: readonly TaintMark[];
  /** The owner's "always confirm" setting. */
  alwaysConfirm: boolean;
  /** The job's `actOnOwnTools` (empty outside jobs). */
  actOnOwnTools: readonly string[];
  /** Sends this run has made or queued so far, whatever the tool. */
  sendsSoFar: number;
  /** The tool keeps an unattended send in its own approval queue (email drafts). */
  queuesUnattendedSends?: boolean;
}

/** Sources with no owner watching: jobs (mail-triggered ones too), Pulse, auto-replies, memory upkeep. */
export const UNATTENDED_SOURCES: ReadonlySet<ActionSource> = new Set([
  'cron',
  'pulse',
  'auto-reply',
  'memory',
]);

export function isUnattended(source: ActionSource): boolean {
  return UNATTENDED_SOURCES.has(source);
}

/** Effects an unattended run never performs on its own (unless the owner allowed the tool for the job). */
const UNATTENDED_WAITS: ReadonlySet<ActionEffect> = new Set([
  'send',
  'delete',
  'move',
]);

/** Effects that wait once the turn has read third-party content: every effect. */
const TAINTED_WAITS: ReadonlySet<ActionEffect> = new Set([
  'send',
  'grant',
  'delete',
  'move',
  'schedule',
  'memory',
  'fetch',
]);

/**
 * Effects that always wait in a voice call: transcription mishears, so the owner hears
 * exactly what would happen and says yes (confirm_action) or approves in the console.
 */
const SPOKEN_WAITS: ReadonlySet<ActionEffect> = new Set(['send', 'delete']);

/** Effects that wait in an attended, unmarked turn when "always confirm" is on. */
const ALWAYS_CONFIRM_WAITS: ReadonlySet<ActionEffect> = new Set([
  'send',
  'delete',
]);

export function sendLimitText(): string {
  return `send limit reached: an unattended run sends at most ${MAX_SENDS_PER_UNATTENDED_RUN} messages, whatever the tool`;
}

/** "this turn read a web page from example.org and an email from ann@example.org" */
export function taintReasonText(taint: readonly TaintMark[]): string {
  const texts = [...new Set(taint.map((m) => m.text))];
  const shown = texts.slice(0, 3);
  const more = texts.length - shown.length;
  const list =
    shown.length <= 1
      ? (shown[0] ?? 'third-party content')
      : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
  return `this turn read ${list}${more > 0 ? ` (and ${more} more)` : ''}`;
}

const SOURCE_WORDS: Record<ActionSource, string> = {
  chat: 'a chat',
  voice: 'a voice call',
  cron: 'a scheduled job',
  pulse: 'a Pulse',
  'auto-reply': "an auto-reply to a contact's message",
  mcp: 'a connected agent (MCP)',
  memory: "the memory's nightly upkeep",
};

export function decideToolCall(input: ActionPolicyInput): ActionDecision {
  const { effect, source, taint } = input;
  if (effect === null) return { kind: 'run' };
  // Another agent is not the owner and leaves nothing for the owner to approve: it only reads.
  if (source === 'mcp')
    return {
      kind: 'refuse',
      reason: `this ${input.tool} call has an outward effect (${effect}): ${SOURCE_WORDS[source]} may only read`,
    };
  const unattended = isUnattended(source);
  if (unattended && effect === 'grant')
    return {
      kind: 'refuse',
      reason: `${input.tool} changes who may use Metatron: it never runs in ${SOURCE_WORDS[source]}, only when the owner asks in a chat`,
    };
  if (
    unattended &&
    effect === 'send' &&
    input.sendsSoFar >= MAX_SENDS_PER_UNATTENDED_RUN
  )
    return { kind: 'refuse', reason: sendLimitText() };
  // The owner's explicit per-job, per-tool consent: it holds even after third-party content.
  if (unattended && input.actOnOwnTools.includes(input.tool))
    return { kind: 'run', onOwn: true };
  if (unattended && effect === 'send' && input.queuesUnattendedSends)
    return { kind: 'run' };
  if (taint.length > 0 && TAINTED_WAITS.has(effect))
    return {
      kind: 'pending',
      reason: { kind: 'tainted', text: taintReasonText(taint) },
    };
  if (unattended && UNATTENDED_WAITS.has(effect))
    return {
      kind: 'pending',
      reason: {
        kind: 'unattended',
        text: `${SOURCE_WORDS[source]} does not ${effect} on its own: the owner approves it`,
      },
    };
  if (source === 'voice' && SPOKEN_WAITS.has(effect))
    return {
      kind: 'pending',
      reason: {
        kind: 'spoken',
        text: `In a voice call every ${effect === 'send' ? 'message sent' : 'deletion'} waits for the owner's yes (transcription mishears)`,
      },
    };
  if (!unattended && input.alwaysConfirm && ALWAYS_CONFIRM_WAITS.has(effect))
    return {
      kind: 'pending',
      reason: {
        kind: 'always-confirm',
        text: `"Always confirm" is on: the owner approves every ${effect === 'send' ? 'message sent' : 'deletion'}`,
      },
    };
  return { kind: 'run' };
}
