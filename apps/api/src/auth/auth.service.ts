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
import { createHash, randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { LoginRateLimiter } from './login-rate-limiter';
import { PasswordHasher } from './password-hasher';
import { OWNER_ID, OwnerCredential } from './schemas/owner.schema';
import { AuthSession } from './schemas/session.schema';

export interface IssuedSession {
  token: string;
  expiresAt: Date;
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
    try {
      if (await this.ownerExists())
        throw new ConflictException(
          'The owner password is already set; log in instead.',
        );
      const passwordHash = await this.hasher.hash(password);
      try {
        await this.owners.create({ _id: OWNER_ID, passwordHash });
      } catch (error) {
        if ((error as { code?: number }).code === 11000) {
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
    return this.openSession();
  }

  /**
   * The attempt is reserved (checked and counted) synchronously, before any await,
   * so parallel guesses cannot all be hashed before the first failure is recorded.
   */
  async login(password: string, client: string): Promise<IssuedSession> {
    const waitMs = this.limiter.reserve(client);
    if (waitMs > 0) throw new TooManyLoginAttemptsException(waitMs);
    let owner: OwnerCredential | null;
    try {
      owner = await this.owners.findById(OWNER_ID).lean();
    } catch (error) {
      this.limiter.release(client);
      throw error;
    }
    if (!owner) {
      this.limiter.release(client);
      throw new ConflictException(
        'No owner password is set yet; complete the first-run setup.',
      );
    }
    if (!(await this.hasher.verify(password, owner.passwordHash))) {
      this.logger.warn(`Failed login from ${client}`);
      throw new UnauthorizedException('Wrong password');
    }
    this.limiter.recordSuccess(client);
    return this.openSession();
  }

  /** True when `token` names an open, unexpired session. */
  async isValidSession(token: string | undefined): Promise<boolean> {
    if (!token) return false;
    const id = hashToken(token);
    const now = this.clock.now().getTime();
    // Every request asks this; a session seen lately is trusted without a database round trip.
    const known = this.recentlyChecked.get(id);
    if (
      known &&
      known.checkedAt + SESSION_RECHECK_MS > now &&
      known.expiresAt > now
    )
      return true;
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

  private async openSession(): Promise<IssuedSession> {
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
    return { token, expiresAt };
  }
}

export class TooManyLoginAttemptsException extends HttpException {
  constructor(readonly retryAfterMs: number) {
    const seconds = Math.ceil(retryAfterMs / 1000);
    super(
      {
        statusCode: HttpStatus.TOO_MANY_REQUESTS,
        message: `Too many failed login attempts. Try again in ${seconds} seconds.`,
        error: 'Too Many Requests',
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
