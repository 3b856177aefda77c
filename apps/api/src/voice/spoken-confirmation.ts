import type {
  ApproveActionResponse,
  PendingActionView,
} from '@metatronos/shared-types';
import { z } from 'zod';
import { toolError } from '../ai-tools/ai-tool';
import { idArgument } from '../ai-tools/lenient-arguments';
import {
  parseToolArguments,
  toolParameters,
} from '../ai-tools/tool-argument-schema';
import type { LlmToolSpec } from '../llm/llm-adapter';

/**
 * Acting by voice (issues 26.6 and 31.3). In a call a send or a deletion first waits
 * as a pending action; the model reads its summary back, and the owner's spoken yes
 * approves it through `confirm_action`, a tool only calls offer. The yes counts only
 * when the action was made in this call, neither it nor the call has read third-party
 * content, and the owner's own last words (their transcript, never the model's) after
 * the read-back are a plain yes. Anything else waits for Approve in the console.
 */

export const CONFIRM_ACTION_TOOL = 'confirm_action';

const CONFIRM_ACTION_ARGS = z.object({
  actionId: idArgument(
    z
      .string({ error: 'actionId must be the actionId of the pending action' })
      .trim()
      .min(1, 'actionId must be the actionId of the pending action')
      .max(64),
  ).describe('The actionId the pending result named'),
});

export const CONFIRM_ACTION_SPEC: LlmToolSpec = {
  name: CONFIRM_ACTION_TOOL,
  description:
    'Do a pending action the owner just approved out loud. Call it only after you read the ' +
    "action's summary to the owner word for word and they answered yes; the server checks their words.",
  parameters: toolParameters(CONFIRM_ACTION_TOOL, CONFIRM_ACTION_ARGS),
};

/** A call's tools as the provider sees them: the session's, and confirm_action when tools are on at all. */
export function withConfirmAction(specs: LlmToolSpec[]): LlmToolSpec[] {
  return specs.length ? [...specs, CONFIRM_ACTION_SPEC] : specs;
}

/** Words that may make up a plain yes; anything else (a name, "no", "but", "instead") is not one. */
const YES_WORDS = new Set([
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'ok',
  'okay',
  'confirm',
  'confirmed',
  'correct',
  'absolutely',
  'definitely',
  'alright',
  'right',
]);
const FILLER_WORDS = new Set([
  ...YES_WORDS,
  'go',
  'ahead',
  'do',
  'it',
  'send',
  'delete',
  'please',
  'thats',
  "that's",
  'that',
  'is',
  'fine',
  'good',
  'great',
  'perfect',
  'sounds',
  'of',
  'course',
  'all',
  'thanks',
  'thank',
  'you',
  'metatron',
  'indeed',
  'and',
  'just',
  'now',
  'exactly',
]);

/** "Yes, send it." → true; "Yes, but to Bob" / "No" / "send it to Anna" → false. */
export function isSpokenYes(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/[^a-z' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0 || words.length > 12) return false;
  if (!words.every((w) => FILLER_WORDS.has(w))) return false;
  return (
    words.some((w) => YES_WORDS.has(w)) ||
    /\b(go ahead|do it|send it|delete it)\b/.test(words.join(' '))
  );
}

export type SpokenApprovalDecision =
  | { ok: true }
  | { ok: false; error: string };

export interface SpokenApprovalInput {
  /** The stored action (null: no such action). */
  action: Pick<
    PendingActionView,
    'status' | 'source' | 'chatId' | 'tainted' | 'reason'
  > | null;
  /** The action was made by a tool call of this very call. */
  heldInThisCall: boolean;
  /** The call's chat. */
  chatId: string;
  /** The call has read third-party content (the mark holds for the rest of the call). */
  callTainted: boolean;
  /** The owner's first words after the action was read back (null: none yet). */
  ownerWords: string | null;
}

/** Whether a spoken yes approves the action: a pure decision, checked by a table. */
export function decideSpokenApproval(
  input: SpokenApprovalInput,
): SpokenApprovalDecision {
  const { action } = input;
  if (
    !action ||
    !input.heldInThisCall ||
    action.source !== 'voice' ||
    action.chatId !== input.chatId
  )
    return {
      ok: false,
      error:
        'No action with this actionId waits in this call: nothing was done.',
    };
  if (action.status !== 'pending')
    return {
      ok: false,
      error: `This action is ${action.status === 'done' ? 'already done' : `no longer pending (${action.status})`}: nothing was done.`,
    };
  if (action.tainted || input.callTainted)
    return {
      ok: false,
      error:
        'A spoken yes cannot approve this: the call read third-party content, so the owner approves it in the console. Nothing was done; tell the owner.',
    };
  if (input.ownerWords === null)
    return {
      ok: false,
      error:
        'The owner has not answered since the action was made: read its summary to them, ask, and wait for their yes. Nothing was done.',
    };
  if (!isSpokenYes(input.ownerWords))
    return {
      ok: false,
      error: `The owner said "${input.ownerWords.slice(0, 200)}", which is not a plain yes: nothing was done. Ask again, or they can approve it in the console.`,
    };
  return { ok: true };
}

/** What confirm_action needs of the pending actions (PendingActionsService). */
export interface SpokenApprovals {
  get(id: string): Promise<PendingActionView>;
  approve(id: string): Promise<ApproveActionResponse>;
}

interface Utterance {
  seq: number;
  itemId: string | null;
  text: string | null;
  /** This yes approved an action already: one yes, one action. */
  used: boolean;
  heard: Array<() => void>;
}

/** How long confirm_action waits for the transcript of words the provider heard but has not written yet. */
export const OWNER_WORDS_WAIT_MS = 5_000;

/**
 * One call's spoken confirmations: the owner's utterances in order (their
 * transcripts arrive after the model may already have answered), the actions the
 * call's tools made, and `confirm_action`.
 */
export class SpokenConfirmations {
  private readonly utterances: Utterance[] = [];
  /** Each action made in this call, with how many utterances had started by then. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly actions: SpokenApprovals,
    private readonly call: { chatId: string; tainted(): boolean },
    private readonly waitMs = OWNER_WORDS_WAIT_MS,
  ) {}

  speechStarted(itemId: string | null): void {
    if (itemId && this.utterances.some((u) => u.itemId === itemId)) return;
    this.utterances.push({
      seq: this.utterances.length + 1,
      itemId,
      text: null,
      used: false,
      heard: [],
    });
  }

  ownerWords(itemId: string | null, text: string): void {
    let utterance = itemId
      ? this.utterances.find((u) => u.itemId === itemId)
      : undefined;
    if (!utterance) {
      this.speechStarted(itemId);
      utterance = this.utterances[this.utterances.length - 1];
    }
    utterance.text = text;
    for (const heard of utterance.heard.splice(0)) heard();
  }

  /** A tool call of this call is now a pending action. */
  actionHeld(actionId: string): void {
    this.held.set(actionId, this.utterances.length);
  }

  /**
   * The pending result as the model reads it in a call: say the summary, then
   * confirm_action on a yes, or (a marked call) point the owner to the console.
   */
  pendingNote(result: string): string {
    try {
      const parsed = JSON.parse(result) as Record<string, unknown>;
      parsed['note'] = this.call.tainted()
        ? 'Not done: this call read third-party content, so a spoken yes cannot approve it. Tell the owner what it would do and that it waits for Approve in the console.'
        : `Not done yet. Read the summary to the owner exactly as written and ask whether to do it. Only if they answer yes, call ${CONFIRM_ACTION_TOOL} with this actionId.`;
      return JSON.stringify(parsed);
    } catch {
      return result;
    }
  }

  /** Runs confirm_action: the JSON string the model receives (never throws). */
  async confirm(rawArgs: unknown, signal: AbortSignal): Promise<string> {
    const checked = parseToolArguments(CONFIRM_ACTION_ARGS, rawArgs);
    if (!checked.ok) return toolError(checked.error);
    const { actionId } = checked.args;
    const heldAt = this.held.get(actionId);
    const action =
      heldAt === undefined
        ? null
        : await this.actions.get(actionId).catch(() => null);
    const answer =
      heldAt === undefined ? undefined : await this.answerAfter(heldAt, signal);
    const decision = decideSpokenApproval({
      action,
      heldInThisCall: heldAt !== undefined,
      chatId: this.call.chatId,
      callTainted: this.call.tainted(),
      ownerWords: answer?.text ?? null,
    });
    if (!decision.ok) return toolError(decision.error);
    if (answer) answer.used = true;
    try {
      const done = await this.actions.approve(actionId);
      return JSON.stringify({ actionId, ...done });
    } catch (error) {
      return toolError(
        `Not done: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** The owner's last utterance if it came after the action was made and approved nothing yet; waits for its transcript. */
  private async answerAfter(
    heldAt: number,
    signal: AbortSignal,
  ): Promise<Utterance | undefined> {
    const last = this.utterances[this.utterances.length - 1];
    if (!last || last.seq <= heldAt || last.used) return undefined;
    if (last.text === null)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.waitMs);
        signal.addEventListener('abort', done, { once: true });
        last.heard.push(done);
        function done() {
          clearTimeout(timer);
          resolve();
        }
      });
    // Words spoken while waiting are the answer now: the newest counts.
    const newest = this.utterances[this.utterances.length - 1];
    return newest.text !== null && !newest.used ? newest : undefined;
  }
}
