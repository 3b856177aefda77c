import type {
  ActionSource,
  ContactChannel,
  TaintMark,
} from '@metatronos/shared-types';

/** The one chat a contact's auto-reply turn may act in (issue 24.4). */
export interface ContactScope {
  channel: ContactChannel;
  /** Digits of the phone on WhatsApp, the chat id on Telegram. */
  address: string;
}

/** How a turn starts, as its caller (chat, job, Pulse, auto-reply, voice) knows it. */
export interface ToolTurnStart {
  source: ActionSource;
  /** Counts the run's sends and names the run: its assistant message. */
  runId: string | null;
  /** The job of a cron or mail-triggered run. */
  jobId?: string | null;
  /** Tools the owner let this job use on its own (send, delete, move without a pending action). */
  actOnOwnTools?: readonly string[];
  /** Third-party content the turn starts with (the contact's message, the mail that triggered a job). */
  taint?: readonly TaintMark[];
  contact?: ContactScope | null;
}

/**
 * What the action policy knows of one turn while it runs: where it came from, what
 * third-party content has entered it (append-only: nothing the model does clears a
 * mark), which hosts it fetched, and how many sends it has used.
 */
export class ToolTurn {
  readonly source: ActionSource;
  readonly runId: string | null;
  readonly jobId: string | null;
  readonly actOnOwnTools: readonly string[];
  readonly contact: ContactScope | null;
  private readonly marks: TaintMark[];
  private readonly hosts = new Set<string>();
  private readonly listeners: Array<(marks: readonly TaintMark[]) => void> = [];

  constructor(start: ToolTurnStart) {
    this.source = start.source;
    this.runId = start.runId;
    this.jobId = start.jobId ?? null;
    this.actOnOwnTools = [...(start.actOnOwnTools ?? [])];
    this.contact = start.contact ?? null;
    this.marks = [...(start.taint ?? [])];
  }

  get taint(): readonly TaintMark[] {
    return this.marks;
  }

  get tainted(): boolean {
    return this.marks.length > 0;
  }

  addTaint(mark: TaintMark): void {
    if (this.marks.some((m) => m.by === mark.by && m.text === mark.text))
      return;
    this.marks.push(mark);
    for (const listener of this.listeners) listener(this.marks);
  }

  /** Called with every mark list from now on (the recording stores it on the reply). */
  onTaint(listener: (marks: readonly TaintMark[]) => void): void {
    this.listeners.push(listener);
  }

  /** Hosts url_fetch reached in this turn: fetching one again is not a new outward channel. */
  hasFetched(host: string): boolean {
    return this.hosts.has(host.toLowerCase());
  }

  noteFetched(host: string): void {
    this.hosts.add(host.toLowerCase());
  }
}
