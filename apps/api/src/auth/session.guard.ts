import {
  CanActivate,
  ExecutionContext,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AuthService } from './auth.service';
import { IS_PUBLIC } from './public.decorator';
import { sessionTokenFrom } from './session-cookie';

/** Global guard: every route needs the owner's session unless it is marked @Public(). */
@Injectable()
export class SessionGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.isPublic(context)) return true;
    const token = sessionTokenFrom(
      context.switchToHttp().getRequest<Request>(),
    );
    // A session checked lately answers at once: no promise on the path of every request.
    if (this.auth.isRecentlyValidSession(token)) return true;
    return this.auth.isValidSession(token).then((valid) => {
      if (valid) return true;
      throw new UnauthorizedException('Log in to MetatronOS first');
    });
  }

  private isPublic(context: ExecutionContext): boolean {
    return Boolean(
      this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
        context.getHandler(),
        context.getClass(),
      ]),
    );
  }
}
