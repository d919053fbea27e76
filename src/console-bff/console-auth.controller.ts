import { Controller, UseFilters, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { expireHostCookie, readCookie, setHostCookie } from '../http/cookies';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { CONSOLE_ROUTES } from './console-bff.routes';
import { CONSOLE_COOKIE, CONSOLE_FLOW_COOKIE, PENDING_SIGN_IN_TTL_SECONDS } from './console-cookies';
import { ConsoleSessionEndedFilter } from './console-session-ended';
import { ConsoleSessionService, type ManagementUser } from './console-session.service';
import { ConsoleSignInService } from './console-sign-in.service';

const CALLBACK_PARAMS = ['code', 'state', 'iss', 'error', 'error_description'] as const;

/** The request id the logger echoed or minted (it is on the response already). */
export function requestIdOf(res: Response): string | undefined {
  const id = res.getHeader('X-Request-Id');
  return typeof id === 'string' ? id : undefined;
}

/** Console sign-in, current user and sign-out (spec 4.1, contract section 4). */
@UseFilters(ConsoleSessionEndedFilter)
@Controller()
export class ConsoleAuthController {
  constructor(
    private readonly signIn: ConsoleSignInService,
    private readonly sessions: ConsoleSessionService,
  ) {}

  @Route(CONSOLE_ROUTES.start)
  async start(@Res() res: Response): Promise<void> {
    const { location, flowCookie } = await this.signIn.start();
    // Lax: the callback arrives as a top-level navigation from the auth host, a cross-site hop.
    setHostCookie(res, CONSOLE_FLOW_COOKIE, flowCookie, PENDING_SIGN_IN_TTL_SECONDS, 'lax');
    res.redirect(303, location);
  }

  @Route(CONSOLE_ROUTES.callback)
  async callback(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    const params: Record<string, string> = {};
    for (const name of CALLBACK_PARAMS) {
      const value = query[name];
      if (typeof value === 'string') params[name] = value;
    }
    const outcome = await this.signIn.callback(
      readCookie(req.headers.cookie, CONSOLE_FLOW_COOKIE),
      params,
      requestIdOf(res),
    );
    expireHostCookie(res, CONSOLE_FLOW_COOKIE, 'lax');
    if (outcome.kind === 'failed') {
      res.redirect(303, `/?error=${outcome.error}`);
      return;
    }
    setHostCookie(res, CONSOLE_COOKIE, outcome.cookie, outcome.maxAgeSeconds, 'strict');
    res.redirect(303, '/');
  }

  @Route(CONSOLE_ROUTES.current)
  current(
    @CurrentPrincipal('console-session') session: PrincipalOf<'console-session'>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ user: ManagementUser }> {
    return this.sessions.currentUser(session, requestIdOf(res));
  }

  @Route(CONSOLE_ROUTES.signOut)
  async signOut(
    @CurrentPrincipal('console-session') session: PrincipalOf<'console-session'>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.sessions.signOut(session, requestIdOf(res));
    expireHostCookie(res, CONSOLE_COOKIE, 'strict');
  }
}
