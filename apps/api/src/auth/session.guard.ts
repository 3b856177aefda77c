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
  /**
   * @Public() per controller class and handler, read once: the decorators are fixed when the
   * module loads. Keyed by class too: a handler inherited by two controllers may differ by class.
   */
  private readonly publicRoutes = new WeakMap<
    object,
    WeakMap<object, boolean>
  >();

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
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.publicRoutes.get(controller);
    if (!handlers) {
      handlers = new WeakMap();
      this.publicRoutes.set(controller, handlers);
    }
    let isPublic = handlers.get(handler);
    if (isPublic === undefined) {
      isPublic = Boolean(
        this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
          handler,
          controller,
        ]),
      );
      handlers.set(handler, isPublic);
    }
    return isPublic;
  }
}
