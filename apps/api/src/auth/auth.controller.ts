import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import {
  AuthService,
  TooManyLoginAttemptsException,
  type IssuedSession,
} from './auth.service';
import { AuthStatusDto, LoginDto, SetupOwnerDto } from './dto/password.dto';
import { Public } from './public.decorator';
import { DEVICE_COOKIE, DEVICE_COOKIE_DAYS } from './login-device';
import {
  SESSION_COOKIE,
  sessionCookieOptions,
  sessionTokenFrom,
} from './session-cookie';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  @Get('status')
  @Public()
  @ApiOperation({
    summary: 'Whether an owner exists and whether this request is logged in',
  })
  @ApiOkResponse({ type: AuthStatusDto })
  async status(@Req() req: Request): Promise<AuthStatusDto> {
    const [ownerExists, authenticated] = await Promise.all([
      this.auth.ownerExists(),
      this.auth.isValidSession(sessionTokenFrom(req)),
    ]);
    return { ownerExists, authenticated };
  }

  @Post('setup')
  @Public()
  @ApiOperation({ summary: 'First run: set the owner password and log in' })
  @ApiCreatedResponse({
    description: 'Owner created; the session cookie is set',
  })
  @ApiBadRequestResponse({
    description: 'Password shorter than 8 characters, or unknown fields',
  })
  @ApiConflictResponse({ description: 'An owner already exists' })
  async setup(
    @Body() body: SetupOwnerDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuthStatusDto> {
    this.setCookie(req, res, await this.auth.setup(body.password));
    return { ownerExists: true, authenticated: true };
  }

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Log in with the owner password' })
  @ApiOkResponse({
    type: AuthStatusDto,
    description: 'Logged in; the session cookie is set',
  })
  @ApiUnauthorizedResponse({
    description:
      'Wrong password; the body adds `attemptsLeft`, `lockMinutes` and, from the third failure, a `warning` in words',
  })
  @ApiTooManyRequestsResponse({
    description:
      'Too many failed attempts from this device or address (or on the whole server, for devices that never logged in); see Retry-After and `retryAfterMinutes`',
  })
  @ApiConflictResponse({ description: 'No owner exists yet' })
  async login(
    @Body() body: LoginDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuthStatusDto> {
    try {
      this.setCookie(
        req,
        res,
        await this.auth.login(
          body.password,
          req.ip ?? 'unknown',
          req.cookies?.[DEVICE_COOKIE],
        ),
      );
    } catch (error) {
      if (error instanceof TooManyLoginAttemptsException)
        res.setHeader('Retry-After', Math.ceil(error.retryAfterMs / 1000));
      throw error;
    }
    return { ownerExists: true, authenticated: true };
  }

  @Post('logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiCookieAuth()
  @ApiOperation({
    summary: 'End this session on the server and clear the cookie',
  })
  @ApiNoContentResponse({ description: 'Logged out' })
  @ApiUnauthorizedResponse({ description: 'No owner session' })
  async logout(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.auth.logout(sessionTokenFrom(req));
    res.clearCookie(SESSION_COOKIE, sessionCookieOptions(this.config, req));
  }

  private setCookie(req: Request, res: Response, session: IssuedSession): void {
    res.cookie(
      SESSION_COOKIE,
      session.token,
      sessionCookieOptions(this.config, req, session.expiresAt),
    );
    // Outlives sessions and logouts: the device stays known to the login limiter.
    res.cookie(
      DEVICE_COOKIE,
      session.deviceToken,
      sessionCookieOptions(
        this.config,
        req,
        new Date(
          this.clock.now().getTime() + DEVICE_COOKIE_DAYS * 24 * 3600 * 1000,
        ),
      ),
    );
  }
}
