import {
  ConflictException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { hash, randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import { Clock } from '../clock/clock';
import { isDuplicateKey } from '../database/duplicate-key';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { deviceTokenFor, verifiedDeviceId } from './login-device';
import {
  LOGIN_MAX_FAILURES,
  LOGIN_WARN_FROM_FAILURE,
  LOGIN_WINDOW_MS,
  LoginRateLimiter,
  waitInWords,
  type LoginWait,
} from './login-rate-limiter';
import { PasswordHasher } from './password-hasher';
import { OWNER_ID, OwnerCredential } from './schemas/owner.schema';
import { AuthSession } from './schemas/session.schema';

export interface IssuedSession {
  token: string;
  expiresAt: Date;
  /** The device cookie's value: this device logged in (see login-device.ts). */
  deviceToken: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * How long a session checked against the database is trusted without asking again.
 * Logout forgets it at once; a session deleted in the database by hand ends within this time.
 */
const SESSION_RECHECK_MS = 60_000;

@Injectable()
export class AuthService {
  private readonly logger = new Logger('Auth');
  private setupRunning = false;
  private readonly recentlyChecked = new Map<
    string,
    { checkedAt: number; expiresAt: number }
  >();

  constructor(
    @InjectModel(OwnerCredential.name)
    private readonly owners: Model<OwnerCredential>,
    @InjectModel(AuthSession.name)
    private readonly sessions: Model<AuthSession>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly hasher: PasswordHasher,
    private readonly limiter: LoginRateLimiter,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  async ownerExists(): Promise<boolean> {
    return (await this.owners.exists({ _id: OWNER_ID })) !== null;
  }

  /** First run only: stores the owner's password and opens a session. */
  async setup(password: string): Promise<IssuedSession> {
    // One setup at a time (claimed before any await): parallel setups would each pay for a slow hash.
    if (this.setupRunning)
      throw new ConflictException(
        'The owner password is being set by another request; log in instead once it is done.',
      );
    this.setupRunning = true;
    let passwordHash: string;
    try {
      if (await this.ownerExists())
        throw new ConflictException(
          'The owner password is already set; log in instead.',
        );
      passwordHash = await this.hasher.hash(password);
      try {
        await this.owners.create({ _id: OWNER_ID, passwordHash });
      } catch (error) {
        if (isDuplicateKey(error)) {
          throw new ConflictException(
            'The owner password is already set; log in instead.',
          );
        }
        throw error;
      }
    } finally {
      this.setupRunning = false;
    }
    this.logger.log('Owner password set');
    return this.openSession(deviceTokenFor(passwordHash));
  }

  /**
   * The attempt is reserved (checked and counted) synchronously, before the
   * password is hashed, so parallel guesses cannot all be hashed before the
   * first failure is recorded. A device cookie signed for the current password
   * makes the device its own source (`deviceToken`).
   */
  async login(
    password: string,
    client: string,
    deviceToken?: unknown,
  ): Promise<IssuedSession> {
    // Read first, counted nothing: no owner or a database error checks no password.
    const owner = await this.owners.findById(OWNER_ID).lean();
    if (!owner)
      throw new ConflictException(
        'No owner password is set yet; complete the first-run setup.',
      );
    const device = verifiedDeviceId(deviceToken, owner.passwordHash);
    const source = { address: client, device };
    // Checked and counted in one synchronous step.
    const wait = this.limiter.wait(source);
    if (wait) throw new TooManyLoginAttemptsException(wait);
    this.limiter.reserve(source);
    if (!(await this.hasher.verify(password, owner.passwordHash))) {
      this.logger.warn(
        `Failed login from ${client}${device ? ' (a known device)' : ''}`,
      );
      throw new WrongPasswordException(
        this.limiter.attemptsLeft(source),
        this.limiter.failuresOf(source),
        this.limiter.wait(source),
      );
    }
    this.limiter.recordSuccess(source);
    return this.openSession(
      deviceTokenFor(owner.passwordHash, device ?? undefined),
    );
  }

  /**
   * True when `token` names a session checked against the database within the
   * last SESSION_RECHECK_MS and not expired since: answered without a database
   * round trip or a promise, as the guard asks it on every request. False means
   * "ask isValidSession", not "invalid".
   */
  isRecentlyValidSession(token: string | undefined): boolean {
    return !!token && this.recentlyValid(hashToken(token));
  }

  private recentlyValid(id: string): boolean {
    const known = this.recentlyChecked.get(id);
    if (!known) return false;
    const now = this.clock.now().getTime();
    return known.checkedAt + SESSION_RECHECK_MS > now && known.expiresAt > now;
  }

  /** True when `token` names an open, unexpired session. */
  async isValidSession(token: string | undefined): Promise<boolean> {
    if (!token) return false;
    const id = hashToken(token);
    if (this.recentlyValid(id)) return true;
    const now = this.clock.now().getTime();
    const session = await this.sessions
      .findOne({ _id: id, expiresAt: { $gt: new Date(now) } }, { expiresAt: 1 })
      .lean()
      .exec();
    if (!session) {
      this.recentlyChecked.delete(id);
      return false;
    }
    if (this.recentlyChecked.size >= 1000) this.recentlyChecked.clear();
    this.recentlyChecked.set(id, {
      checkedAt: now,
      expiresAt: session.expiresAt.getTime(),
    });
    return true;
  }

  async logout(token: string | undefined): Promise<void> {
    if (!token) return;
    this.recentlyChecked.delete(hashToken(token));
    await this.sessions.deleteOne({ _id: hashToken(token) });
    this.events.emit('auth.logged_out', { at: this.clock.now().toISOString() });
  }

  private async openSession(deviceToken: string): Promise<IssuedSession> {
    const now = this.clock.now();
    await this.sessions.deleteMany({ expiresAt: { $lte: now } });
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(
      now.getTime() + this.config.sessionTtlDays * DAY_MS,
    );
    await this.sessions.create({
      _id: hashToken(token),
      createdAt: now,
      expiresAt,
    });
    return { token, expiresAt, deviceToken };
  }
}

const LOCK_MINUTES = Math.round(LOGIN_WINDOW_MS / 60_000);

export class TooManyLoginAttemptsException extends HttpException {
  readonly retryAfterMs: number;
  constructor(wait: LoginWait) {
    const minutes = Math.max(1, Math.ceil(wait.waitMs / 60_000));
    super(
      {
        statusCode: HttpStatus.TOO_MANY_REQUESTS,
        message:
          wait.scope === 'global'
            ? `Too many failed login attempts on this server. Try again in ${waitInWords(wait.waitMs)}; a device that has logged in here before can still log in.`
            : `Too many failed login attempts. Try again in ${waitInWords(wait.waitMs)}.`,
        error: 'Too Many Requests',
        retryAfterSeconds: Math.ceil(wait.waitMs / 1000),
        retryAfterMinutes: minutes,
        lockScope: wait.scope,
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
    this.retryAfterMs = wait.waitMs;
  }
}

/**
 * 401 for a wrong password, in the usual shape plus how many tries are left;
 * from the third failure on, a `warning` says so in words.
 */
export class WrongPasswordException extends UnauthorizedException {
  constructor(attemptsLeft: number, failures: number, lock: LoginWait | null) {
    const warn =
      attemptsLeft === 0 ||
      failures >= LOGIN_WARN_FROM_FAILURE ||
      attemptsLeft <= LOGIN_MAX_FAILURES - LOGIN_WARN_FROM_FAILURE;
    const warning = !warn
      ? undefined
      : attemptsLeft > 0
        ? `${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left before a ${LOCK_MINUTES}-minute lock.`
        : `No tries left: logging in is locked for ${waitInWords(lock?.waitMs ?? LOGIN_WINDOW_MS)}.`;
    super({
      statusCode: HttpStatus.UNAUTHORIZED,
      message: 'Wrong password',
      error: 'Unauthorized',
      attemptsLeft,
      lockMinutes: LOCK_MINUTES,
      ...(warning ? { warning } : {}),
    });
  }
}

function hashToken(token: string): string {
  // The one-shot form: no Hash object per request (the guard hashes every request's cookie).
  return hash('sha256', token, 'hex');
}
