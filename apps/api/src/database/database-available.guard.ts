import {
  CanActivate,
  ExecutionContext,
  Injectable,
  SetMetadata,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DatabaseHealthService } from './database-health.service';

export const DATABASE_UNAVAILABLE_MESSAGE =
  'The database is unavailable. Check the server log; restarting MetatronOS usually helps.';

const SKIP_DATABASE_CHECK = 'metatron:skipDatabaseCheck';
/** For routes that report on the database themselves (health). */
export const SkipDatabaseCheck = () => SetMetadata(SKIP_DATABASE_CHECK, true);

/** Runs before every other guard: while the database is down, requests get 503 at once instead of hanging. */
@Injectable()
export class DatabaseAvailableGuard implements CanActivate {
  constructor(
    private readonly health: DatabaseHealthService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const skip = this.reflector.getAllAndOverride<boolean>(
      SKIP_DATABASE_CHECK,
      [context.getHandler(), context.getClass()],
    );
    if (!skip && this.health.status === 'down')
      throw new ServiceUnavailableException(DATABASE_UNAVAILABLE_MESSAGE);
    return true;
  }
}
