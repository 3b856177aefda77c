import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, type Model } from 'mongoose';
import {
  PASSWORD_MASK,
  type AccountTestResult,
  type AccountView,
  type MailServerInput,
  type MailServerView,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import type {
  AccountRecord,
  CalendarAccountRecord,
  EmailAccountRecord,
} from './account-records';
import {
  AccountConnectionError,
  AccountConnectionTester,
} from './account-connection-test';
import { toAccountRecord } from './accounts-store';
import type {
  CreateAccountDto,
  MailServerPatchDto,
  UpdateAccountDto,
} from './dto/account.dto';
import { AccountDoc } from './schemas/account.schema';

const EMAIL_ONLY = ['address', 'imap', 'smtp'] as const;
const CALENDAR_ONLY = ['url', 'user', 'password', 'secure'] as const;

/** A password field that keeps the stored one: omitted or the mask the console shows. */
function keepsPassword(value: string | undefined): boolean {
  return value === undefined || value === PASSWORD_MASK;
}

function maskServer(server: MailServerInput): MailServerView {
  return {
    host: server.host,
    port: server.port,
    secure: server.secure,
    user: server.user,
    password: PASSWORD_MASK,
  };
}

/** An account as every response shows it: the password replaced by the mask. */
export function accountView(doc: AccountDoc): AccountView {
  const record = toAccountRecord(doc);
  const times = {
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
  if (record.kind === 'email')
    return {
      id: record.id,
      kind: 'email',
      name: record.name,
      address: record.address,
      imap: maskServer(record.imap),
      smtp: maskServer(record.smtp),
      ...times,
    };
  return {
    id: record.id,
    kind: 'calendar',
    name: record.name,
    url: record.url,
    user: record.user,
    password: PASSWORD_MASK,
    secure: record.secure,
    address: record.user,
    ...times,
  };
}

/**
 * The checked CalDAV URL: http(s) only, no credentials or fragment in it, and a
 * plain http:// one only when the owner set `secure: false` explicitly.
 */
export function calendarUrl(
  raw: string,
  secure: boolean | undefined,
): { url: string; secure: boolean } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadRequestException(
      'url must be a CalDAV URL like https://caldav.example.com/',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new BadRequestException('url must start with https:// (or http://)');
  if (url.username || url.password)
    throw new BadRequestException(
      'url must not hold a user name or password: put them in user and password',
    );
  if (url.hash) throw new BadRequestException('url must not have a #fragment');
  if (url.protocol === 'http:' && secure !== false)
    throw new BadRequestException(
      'url is plain http://, so the password would travel unencrypted: use https://, or set secure: false to allow it explicitly',
    );
  return { url: url.toString(), secure: url.protocol === 'https:' };
}

/**
 * Email and calendar accounts behind `/api/accounts`: each connection is tested
 * before anything is stored, and nothing returned holds a password.
 */
@Injectable()
export class AccountsService {
  constructor(
    @InjectModel(AccountDoc.name) private readonly accounts: Model<AccountDoc>,
    private readonly tester: AccountConnectionTester,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  async list(): Promise<AccountView[]> {
    const docs = await this.accounts
      .find({})
      .sort({ createdAt: 1 })
      .lean<AccountDoc[]>()
      .exec();
    return docs.map(accountView);
  }

  async get(id: string): Promise<AccountView> {
    return accountView(await this.load(id));
  }

  /** Tests a create body's connection; nothing is stored. */
  async test(input: CreateAccountDto): Promise<AccountTestResult> {
    return this.connect(this.recordFromCreate(input, 'test'));
  }

  async testStored(id: string): Promise<AccountTestResult> {
    return this.connect(toAccountRecord(await this.load(id)));
  }

  async create(input: CreateAccountDto): Promise<AccountView> {
    const record = this.recordFromCreate(input, 'new');
    await this.refuseDuplicates(record);
    await this.connect(record);
    const now = this.clock.now();
    const doc = await this.accounts.create({
      ...this.fields(record),
      createdAt: now,
      updatedAt: now,
    });
    const id = doc._id.toHexString();
    this.events.emit('accounts.changed', {
      id,
      change: 'created',
      at: now.toISOString(),
    });
    return this.get(id);
  }

  async update(id: string, patch: UpdateAccountDto): Promise<AccountView> {
    const doc = await this.load(id);
    const stored = toAccountRecord(doc);
    const next =
      stored.kind === 'email'
        ? this.patchEmail(stored, patch)
        : this.patchCalendar(stored, patch);
    await this.refuseDuplicates(next);
    if (this.connectionChanged(stored, next)) await this.connect(next);
    const now = this.clock.now();
    await this.accounts
      .updateOne(
        { _id: doc._id },
        { $set: { ...this.fields(next), updatedAt: now } },
      )
      .exec();
    this.events.emit('accounts.changed', {
      id,
      change: 'updated',
      at: now.toISOString(),
    });
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    const doc = await this.load(id);
    await this.accounts.deleteOne({ _id: doc._id }).exec();
    this.events.emit('accounts.changed', {
      id,
      change: 'deleted',
      at: this.clock.now().toISOString(),
    });
  }

  private async load(id: string): Promise<AccountDoc> {
    const doc = isValidObjectId(id)
      ? await this.accounts.findById(id).lean<AccountDoc>().exec()
      : null;
    if (!doc) throw new NotFoundException(`No account ${id}`);
    return doc;
  }

  private async connect(record: AccountRecord): Promise<AccountTestResult> {
    try {
      return await this.tester.test(record);
    } catch (error) {
      if (error instanceof AccountConnectionError)
        throw new BadRequestException(error.message);
      throw error;
    }
  }

  private refuseOtherKindFields(
    kind: AccountRecord['kind'],
    body: object,
  ): void {
    const foreign = kind === 'email' ? CALENDAR_ONLY : EMAIL_ONLY;
    const present = foreign.filter(
      (key) => (body as Record<string, unknown>)[key] !== undefined,
    );
    if (present.length)
      throw new BadRequestException(
        `${present.join(', ')} ${present.length === 1 ? 'is' : 'are'} not a field of ${kind === 'email' ? 'an email' : 'a calendar'} account`,
      );
  }

  private recordFromCreate(input: CreateAccountDto, id: string): AccountRecord {
    this.refuseOtherKindFields(input.kind, input);
    const name = input.name.trim();
    if (input.kind === 'email') {
      const server = (s: MailServerInput): MailServerInput => ({
        host: s.host.trim(),
        port: s.port,
        secure: s.secure !== false,
        user: s.user,
        password: s.password,
      });
      return {
        id,
        kind: 'email',
        name,
        address: (input.address ?? '').trim(),
        imap: server(input.imap as MailServerInput),
        smtp: server(input.smtp as MailServerInput),
      };
    }
    return {
      id,
      kind: 'calendar',
      name,
      ...calendarUrl(input.url ?? '', input.secure),
      user: input.user ?? '',
      password: input.password ?? '',
    };
  }

  private patchEmail(
    stored: EmailAccountRecord,
    patch: UpdateAccountDto,
  ): EmailAccountRecord {
    this.refuseOtherKindFields('email', patch);
    return {
      ...stored,
      name: patch.name?.trim() ?? stored.name,
      address: patch.address?.trim() ?? stored.address,
      imap: this.patchServer('IMAP', stored.imap, patch.imap),
      smtp: this.patchServer('SMTP', stored.smtp, patch.smtp),
    };
  }

  /**
   * A stored password stays bound to the server and login it was given for:
   * moving either needs the password again, so a changed host cannot receive it.
   */
  private patchServer(
    protocol: 'IMAP' | 'SMTP',
    stored: MailServerInput,
    patch: MailServerPatchDto | undefined,
  ): MailServerInput {
    if (!patch) return stored;
    const next: MailServerInput = {
      host: patch.host?.trim() ?? stored.host,
      port: patch.port ?? stored.port,
      secure: patch.secure ?? stored.secure,
      user: patch.user ?? stored.user,
      password: keepsPassword(patch.password)
        ? stored.password
        : (patch.password as string),
    };
    const moved =
      next.host.toLowerCase() !== stored.host.toLowerCase() ||
      next.port !== stored.port ||
      next.user !== stored.user;
    if (moved && keepsPassword(patch.password))
      throw new BadRequestException(
        `Changing the ${protocol} server, port or user needs the ${protocol} password again (the stored one stays with the server it was given for)`,
      );
    return next;
  }

  private patchCalendar(
    stored: CalendarAccountRecord,
    patch: UpdateAccountDto,
  ): CalendarAccountRecord {
    this.refuseOtherKindFields('calendar', patch);
    const checked =
      patch.url !== undefined || patch.secure !== undefined
        ? calendarUrl(patch.url ?? stored.url, patch.secure ?? stored.secure)
        : { url: stored.url, secure: stored.secure };
    const next: CalendarAccountRecord = {
      ...stored,
      name: patch.name?.trim() ?? stored.name,
      ...checked,
      user: patch.user ?? stored.user,
      password: keepsPassword(patch.password)
        ? stored.password
        : (patch.password as string),
    };
    const moved = next.url !== stored.url || next.user !== stored.user;
    if (moved && keepsPassword(patch.password))
      throw new BadRequestException(
        'Changing the CalDAV URL or user needs the password again (the stored one stays with the server it was given for)',
      );
    return next;
  }

  private connectionChanged(a: AccountRecord, b: AccountRecord): boolean {
    const strip = (r: AccountRecord) => {
      const { name: _name, id: _id, ...rest } = r;
      return JSON.stringify(rest);
    };
    return strip(a) !== strip(b);
  }

  /** Names must be unique (select_account matches them), and so must an address or a CalDAV login. */
  private async refuseDuplicates(record: AccountRecord): Promise<void> {
    const others = (await this.accounts.find({}).lean<AccountDoc[]>().exec())
      .map(toAccountRecord)
      .filter((a) => a.id !== record.id);
    const lower = (s: string) => s.trim().toLowerCase();
    if (others.some((a) => lower(a.name) === lower(record.name)))
      throw new ConflictException(
        `An account named '${record.name}' exists already: choose another name`,
      );
    if (
      record.kind === 'email' &&
      others.some(
        (a) => a.kind === 'email' && lower(a.address) === lower(record.address),
      )
    )
      throw new ConflictException(
        `An email account for ${record.address} exists already`,
      );
    if (
      record.kind === 'calendar' &&
      others.some(
        (a) =>
          a.kind === 'calendar' &&
          a.url === record.url &&
          a.user === record.user,
      )
    )
      throw new ConflictException(
        `A calendar account for '${record.user}' at ${record.url} exists already`,
      );
  }

  /** The stored document's fields for a record. */
  private fields(
    record: AccountRecord,
  ): Omit<AccountDoc, '_id' | 'createdAt' | 'updatedAt'> {
    if (record.kind === 'email')
      return {
        kind: 'email',
        name: record.name,
        address: record.address,
        imap: record.imap,
        smtp: record.smtp,
        url: null,
        user: null,
        password: null,
        secure: true,
      };
    return {
      kind: 'calendar',
      name: record.name,
      address: record.user,
      imap: null,
      smtp: null,
      url: record.url,
      user: record.user,
      password: record.password,
      secure: record.secure,
    };
  }
}
