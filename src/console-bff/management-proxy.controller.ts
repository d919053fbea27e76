import { Controller, UseFilters, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AppError } from '../errors/app-error';
import { TENANT_ID_PATTERN } from '../platform/crypto/ids';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { requestIdOf } from './console-auth.controller';
import { CONSOLE_ROUTES } from './console-bff.routes';
import { ConsoleSessionEndedFilter } from './console-session-ended';
import { ConsoleSessionService } from './console-session.service';

/** Contract section 4: the only upstream headers a browser sees. Never Set-Cookie. */
const FORWARDED_HEADERS = ['content-type', 'www-authenticate', 'x-request-id'] as const;

/**
 * The fixed proxy of contract section 4: three GET routes mapped one to one onto the management
 * API, each with the server's bearer. Any other path under /api/management/ has no route, so
 * the router answers 404 `not_found`. There are no state-changing management operations to
 * proxy; non-GET methods are 404 too (a future one would also need the exact Origin, which the
 * `console-session` policy already requires of non-GET methods).
 */
@UseFilters(ConsoleSessionEndedFilter)
@Controller()
export class ManagementProxyController {
  constructor(private readonly sessions: ConsoleSessionService) {}

  @Route(CONSOLE_ROUTES.proxyTenants)
  tenants(
    @CurrentPrincipal('console-session') session: PrincipalOf<'console-session'>,
    @Res() res: Response,
  ): Promise<void> {
    return this.forward(session, '/management/tenants', res);
  }

  @Route(CONSOLE_ROUTES.proxyTenant)
  tenant(
    @CurrentPrincipal('console-session') session: PrincipalOf<'console-session'>,
    @Param('id') id: string,
    @Res() res: Response,
  ): Promise<void> {
    return this.forward(session, `/management/tenants/${tenantId(id)}`, res);
  }

  @Route(CONSOLE_ROUTES.proxyClients)
  clients(
    @CurrentPrincipal('console-session') session: PrincipalOf<'console-session'>,
    @Param('id') id: string,
    @Res() res: Response,
  ): Promise<void> {
    return this.forward(session, `/management/tenants/${tenantId(id)}/clients`, res);
  }

  /** Management API bodies carry no tokens or credentials (contract 5), so they pass as they are. */
  private async forward(session: PrincipalOf<'console-session'>, path: string, res: Response): Promise<void> {
    const upstream = await this.sessions.callApi(session, 'GET', path, requestIdOf(res));
    for (const name of FORWARDED_HEADERS) {
      const value = upstream.headers[name];
      if (typeof value === 'string') res.setHeader(name, value);
    }
    res.status(upstream.status).end(upstream.body);
  }
}

function tenantId(id: string): string {
  if (!TENANT_ID_PATTERN.test(id)) throw new AppError('not_found');
  return id;
}
