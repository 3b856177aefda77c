import {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, Types, type Model } from 'mongoose';
import type {
  AppEventMap,
  EmailDraftAction,
  EmailDraftRepliesTo,
  EmailDraftStatus,
  EmailDraftView,
  UpdateEmailDraftRequest,
} from '@metatronos/shared-types';
import { Clock } from '../../../clock/clock';
import { AppEventBus } from '../../../events/app-event-bus';
import { AccountCredentials } from '../../account-records';
import {
  EmailSendError,
  sendEmail,
  type OutgoingEmail,
} from '../outgoing-mail';
import { EmailDraftRecord } from './email-draft.schema';

export const DRAFT_NOT_FOUND = 'Draft not found';
export const DRAFT_ALREADY_SENT = 'This draft was already sent';
export const DRAFT_BEING_SENT = 'This draft is being sent right now';

/** What an unattended turn hands over instead of sending. */
export interface NewEmailDraft extends OutgoingEmail {
  accountId: string;
  accountAddress: string;
  action: EmailDraftAction;
  source: string;
  chatId: string | null;
  repliesTo?: EmailDraftRepliesTo | null;
}

/** The scheduled jobs' collection, read here by name: the email module must not depend on automations. */
const CRON_JOBS_COLLECTION = 'cronjobs';

function toView(record: EmailDraftRecord): EmailDraftView {
  return {
    id: record._id.toHexString(),
    accountId: record.accountId,
    accountAddress: record.accountAddress,
    action: record.action,
    to: record.to,
    cc: record.cc,
    subject: record.subject,
    text: record.text,
    inReplyTo: record.inReplyTo ?? null,
    source: record.source,
    chatId: record.chatId ?? null,
    jobId: record.jobId ?? null,
    jobName: record.jobName ?? null,
    repliesTo: record.repliesTo ?? null,
    status: record.status,
    error: record.error ?? null,
    createdAt: record.createdAt.toISOString(),
    sentAt: record.sentAt ? record.sentAt.toISOString() : null,
  };
}

/**
 * `email_drafts`: what the AI wrote in jobs, Pulse and auto-replies. Nothing in it
 * leaves the server until the owner sends it from the console.
 */
@Injectable()
export class DraftsService {
  /**
   * Drafts whose send is under way. Held in memory, not in the document: the
   * embedded database's findAndModify is not atomic (two racing sends both
   * claimed a draft in a test), and one process serves the data dir.
   */
  private readonly sendingNow = new Set<string>();

  constructor(
    @InjectModel(EmailDraftRecord.name)
    private readonly drafts: Model<EmailDraftRecord>,
    private readonly credentials: AccountCredentials,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  private changed(
    id: string,
    change: AppEventMap['drafts.changed']['change'],
  ): void {
    this.events.emit('drafts.changed', {
      id,
      change,
      at: this.clock.now().toISOString(),
    });
  }

  private async find(id: string): Promise<EmailDraftRecord> {
    const record = isValidObjectId(id)
      ? await this.drafts.findById(id).lean<EmailDraftRecord>().exec()
      : null;
    if (!record) throw new NotFoundException(DRAFT_NOT_FOUND);
    return record;
  }

  /** The job whose run wrote into this chat: a job's chat is its own, so the chat names the job. */
  private async jobOf(
    draft: NewEmailDraft,
  ): Promise<{ jobId: string | null; jobName: string | null }> {
    if (
      draft.source !== 'cron' ||
      !draft.chatId ||
      !isValidObjectId(draft.chatId)
    )
      return { jobId: null, jobName: null };
    const job = await this.drafts.db
      .collection(CRON_JOBS_COLLECTION)
      .findOne(
        { chatId: new Types.ObjectId(draft.chatId) },
        { projection: { name: 1 } },
      );
    if (!job) return { jobId: null, jobName: null };
    const name: unknown = job['name'];
    return {
      jobId: String(job._id),
      jobName: typeof name === 'string' ? name : null,
    };
  }

  async create(draft: NewEmailDraft): Promise<EmailDraftView> {
    const job = await this.jobOf(draft);
    const created = await this.drafts.create({
      accountId: draft.accountId,
      accountAddress: draft.accountAddress,
      action: draft.action,
      to: draft.to,
      cc: draft.cc,
      subject: draft.subject,
      text: draft.text,
      inReplyTo: draft.inReplyTo,
      references: draft.references,
      source: draft.source,
      chatId: draft.chatId,
      ...job,
      repliesTo: draft.repliesTo ?? null,
      status: 'pending',
      error: null,
      createdAt: this.clock.now(),
      sentAt: null,
    });
    const view = toView(created.toObject<EmailDraftRecord>());
    this.changed(view.id, 'created');
    return view;
  }

  /** Newest first. */
  async list(status?: EmailDraftStatus): Promise<EmailDraftView[]> {
    const records = await this.drafts
      .find(status ? { status } : {})
      .sort({ createdAt: -1, _id: -1 })
      .lean<EmailDraftRecord[]>()
      .exec();
    return records.map(toView);
  }

  /** The owner's edits of a draft that has not gone out (addresses checked by the DTO). */
  async update(
    id: string,
    change: UpdateEmailDraftRequest,
  ): Promise<EmailDraftView> {
    const record = await this.find(id);
    if (record.status === 'sent')
      throw new ConflictException('A sent draft cannot be edited');
    if (this.sendingNow.has(record._id.toHexString()))
      throw new ConflictException(DRAFT_BEING_SENT);
    const set: Partial<EmailDraftRecord> = {};
    if (change.to !== undefined) set.to = change.to;
    if (change.cc !== undefined) set.cc = change.cc;
    if (change.subject !== undefined) set.subject = change.subject;
    if (change.text !== undefined) set.text = change.text;
    const updated = await this.drafts
      .findOneAndUpdate(
        { _id: record._id, status: { $ne: 'sent' } },
        { $set: set },
        { new: true },
      )
      .lean<EmailDraftRecord>()
      .exec();
    if (!updated) throw new ConflictException('A sent draft cannot be edited');
    // Other open consoles refresh the draft they show.
    this.changed(id, 'updated');
    return toView(updated);
  }

  /**
   * Sends a pending (or failed) draft through its account's SMTP server, with the
   * reply's threading headers. A failure is kept on the draft (`failed` + why).
   */
  async send(id: string): Promise<EmailDraftView> {
    const found = await this.find(id);
    if (found.status === 'sent')
      throw new ConflictException(DRAFT_ALREADY_SENT);
    const key = found._id.toHexString();
    // Checked and taken without an await in between: two clicks send once.
    if (this.sendingNow.has(key)) throw new ConflictException(DRAFT_BEING_SENT);
    this.sendingNow.add(key);
    try {
      // Read again once claimed: a send that finished meanwhile has marked it sent.
      const record = await this.find(id);
      if (record.status === 'sent')
        throw new ConflictException(DRAFT_ALREADY_SENT);
      return await this.deliver(record);
    } finally {
      this.sendingNow.delete(key);
    }
  }

  private async deliver(record: EmailDraftRecord): Promise<EmailDraftView> {
    const id = record._id.toHexString();
    const account = await this.credentials.get(record.accountId);
    if (!account || account.kind !== 'email') {
      const reason = `The email account ${record.accountAddress} this draft was written for no longer exists: add it again, or discard the draft.`;
      await this.fail(record, reason);
      throw new BadRequestException(reason);
    }
    try {
      await sendEmail(account, {
        to: record.to,
        cc: record.cc,
        subject: record.subject,
        text: record.text,
        inReplyTo: record.inReplyTo ?? null,
        references: record.references ?? [],
      });
    } catch (error) {
      const failure =
        error instanceof EmailSendError
          ? error
          : new EmailSendError('The message could not be sent.', 'server');
      await this.fail(record, failure.message);
      throw failure.kind === 'recipients'
        ? new BadRequestException(failure.message)
        : new BadGatewayException(failure.message);
    }
    const sent = await this.drafts
      .findByIdAndUpdate(
        record._id,
        { $set: { status: 'sent', sentAt: this.clock.now(), error: null } },
        { new: true },
      )
      .lean<EmailDraftRecord>()
      .exec();
    this.changed(id, 'sent');
    return toView(sent ?? record);
  }

  private async fail(record: EmailDraftRecord, reason: string): Promise<void> {
    await this.drafts
      .updateOne(
        { _id: record._id },
        { $set: { status: 'failed', error: reason } },
      )
      .exec();
    this.changed(record._id.toHexString(), 'failed');
  }

  async remove(id: string): Promise<void> {
    const record = await this.find(id);
    if (this.sendingNow.has(record._id.toHexString()))
      throw new ConflictException(DRAFT_BEING_SENT);
    await this.drafts.deleteOne({ _id: record._id }).exec();
    this.changed(id, 'discarded');
  }
}
