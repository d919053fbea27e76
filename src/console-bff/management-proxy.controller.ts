import { Controller, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '../errors/app-error';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { CLIENT_ID_PATTERN, ID_PATTERN, TENANT_ID_PATTERN } from '../platform/crypto/ids';
import { requestIdOf } from './console-auth.controller';
import { ConsoleSessionEndedFilter } from './console-session-ended';
import { ConsoleSessionService } from './console-session.service';
import { PROXY_ROUTES, type ProxiedRoute } from './management-proxy.routes';

/** Contract section 4: the only upstream headers a browser sees. Never Set-Cookie. */
const FORWARDED_HEADERS = ['content-type', 'www-authenticate', 'x-request-id'] as const;

/**
 * What each path parameter may be. A value that fails gets 404 here and is never sent on, so a
 * proxied path can only ever name the route it was declared for (no `..`, `/` or `%2F` in it).
 */
const PATH_PARAMETERS: Readonly<Record<string, RegExp>> = {
  id: TENANT_ID_PATTERN,
  clientId: CLIENT_ID_PATTERN,
  userId: ID_PATTERN('usr'),
  sessionId: ID_PATTERN('ses'),
};

/**
 * The fixed proxy of contracts 4 and 15: each route of PROXY_ROUTES maps one to one onto the same
 * management path on the API, with the session's bearer. Any other path or method under
 * /api/management/ has no route, so the router answers 404 `not_found`. State-changing calls
 * need the exact console Origin: the `console-session` policy refuses them without it (403)
 * before anything is sent.
 */
@UseFilters(ConsoleSessionEndedFilter)
@Controller()
export class ManagementProxyController {
  constructor(private readonly sessions: ConsoleSessionService) {}

  /** Management API bodies carry no tokens or credentials (contracts 5, 15), so they pass as they are. */
  async forward(route: ProxiedRoute, session: Session, req: Request, res: Response): Promise<void> {
    const path = upstreamPath(route, req);
    const body: unknown = route.method === 'GET' ? undefined : req.body;
    const upstream = await this.sessions.callApi(session, route.method, path, requestIdOf(res), body);
    for (const name of FORWARDED_HEADERS) {
      const value = upstream.headers[name];
      if (typeof value === 'string') res.setHeader(name, value);
    }
    res.status(upstream.status).end(upstream.body);
  }
}

type Session = PrincipalOf<'console-session'>;

/**
 * One handler per route of PROXY_ROUTES, named after it, each forwarding its own route: the table
 * is the only list of what the proxy serves. Decorated here as a class body would decorate it.
 */
for (const [name, route] of Object.entries<ProxiedRoute>(PROXY_ROUTES)) {
  const proto = ManagementProxyController.prototype as unknown as Record<string, unknown>;
  proto[name] = {
    [name](this: ManagementProxyController, session: Session, req: Request, res: Response): Promise<void> {
      return this.forward(route, session, req, res);
    },
  }[name];
  CurrentPrincipal('console-session')(proto, name, 0);
  Req()(proto, name, 1);
  Res()(proto, name, 2);
  const descriptor = Object.getOwnPropertyDescriptor(proto, name);
  if (descriptor) Route(route)(proto, name, descriptor);
}

/** The management path of a proxied request: `/api` dropped, parameters checked, known query kept. */
function upstreamPath(route: ProxiedRoute, req: Request): string {
  const path = route.path.replace(/^\/api/, '').replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = req.params[name];
    const pattern = PATH_PARAMETERS[name];
    if (typeof value !== 'string' || !pattern?.test(value)) throw new AppError('not_found');
    return value;
  });
  const query = new URLSearchParams();
  for (const name of route.query) {
    const value = req.query[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new AppError('invalid_request', `${name} must be given once.`);
    query.set(name, value);
  }
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}
