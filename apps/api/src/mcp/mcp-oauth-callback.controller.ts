import { BadRequestException, Controller, Get, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ModuleRef } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AuthService } from '../auth/auth.service';
import { Public } from '../auth/public.decorator';
import { sessionTokenFrom } from '../auth/session-cookie';
import { McpServersService } from './mcp-servers.service';

/**
 * The one route an authorization server sends the owner's browser back to. It is a
 * top-level navigation, so it answers HTML. It still needs the owner's session: the
 * guard is done here rather than by the global one because a SameSite=Strict cookie is
 * not sent on a navigation that another site started; the page then reloads itself
 * once from this origin (which sends it). The `state` names the waiting sign-in.
 */
@ApiTags('mcp')
@Controller('mcp/oauth')
export class McpOAuthCallbackController {
  constructor(
    private readonly servers: McpServersService,
    private readonly modules: ModuleRef,
  ) {}

  /** The owner's sessions (AuthModule is built once by the app root with its hasher, so it is looked up, not imported). */
  private get auth(): AuthService {
    return this.modules.get(AuthService, { strict: false });
  }

  @Get('callback')
  @Public()
  @ApiOperation({
    summary:
      "The authorization server's redirect after an MCP sign-in (?code&state, or ?error): needs the owner's session; answers an HTML page",
  })
  @ApiOkResponse({ description: 'Signed in (HTML)' })
  @ApiBadRequestResponse({
    description: 'A wrong or expired state, a refused code (HTML)',
  })
  @ApiUnauthorizedResponse({ description: 'No owner session (HTML)' })
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    // The URL carries the code: no other page learns it from a Referer.
    res.setHeader('Referrer-Policy', 'no-referrer');
    const query = req.query;
    const one = (name: string): string | null => {
      const value = query[name];
      return typeof value === 'string' ? value.slice(0, 4000) : null;
    };
    if (!(await this.auth.isValidSession(sessionTokenFrom(req)))) {
      if (one('hop') === null) {
        const again = new URLSearchParams();
        for (const name of ['code', 'state', 'error', 'error_description']) {
          const value = one(name);
          if (value !== null) again.set(name, value);
        }
        again.set('hop', '1');
        page(
          res,
          200,
          'Signing in…',
          'Finishing the sign-in in this console.',
          `${req.path}?${again.toString()}`,
        );
        return;
      }
      page(
        res,
        401,
        'Log in first',
        'Log in to MetatronOS in this browser, then sign in to the server again from the Tools page.',
      );
      return;
    }
    const state = one('state');
    if (!state) {
      page(res, 400, 'Sign-in failed', 'The redirect carries no state.');
      return;
    }
    const error = one('error');
    const description = one('error_description');
    try {
      const server = await this.servers.finishSignIn(
        state,
        one('code'),
        error === null
          ? null
          : `${error.slice(0, 80)}${description ? `: ${description.slice(0, 200)}` : ''}`,
      );
      page(
        res,
        200,
        `Signed in to ${server.name}`,
        `MetatronOS is signed in to the MCP server ${server.name} (${server.status.message}). You can close this tab.`,
      );
    } catch (caught) {
      if (!(caught instanceof BadRequestException)) throw caught;
      page(res, 400, 'Sign-in failed', caught.message);
    }
  }
}

/** A small page for the tab the sign-in opened; `next` reloads it from this origin. */
function page(
  res: Response,
  status: number,
  title: string,
  text: string,
  next?: string,
): void {
  const refresh = next
    ? `<meta http-equiv="refresh" content="0;url=${escape(next)}">`
    : '';
  res
    .status(status)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">${refresh}<title>${escape(title)}</title></head>` +
        `<body style="font-family:sans-serif;max-width:40rem;margin:3rem auto"><h1>${escape(title)}</h1><p>${escape(text)}</p>` +
        `${next ? '' : '<p><a href="/tools">Back to the Tools page</a></p>'}</body></html>`,
    );
}

function escape(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[
        c
      ] as string,
  );
}
