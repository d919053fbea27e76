import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../errors/app-error';

/**
 * The callers a route can have, by kind. The edge declares only `anonymous` (public routes); each
 * feature module adds the principals its authenticators hand over, where it declares them:
 *
 *   declare module '../http/principal' {
 *     interface Principals { guest: { readonly tenantId: string; ... } }
 *   }
 *
 * so what a principal carries (a console session's tokens, say) stays the feature's business.
 */
export interface Principals {
  anonymous: Record<never, never>;
}

/** The typed caller an authenticator hands to the controller. */
export type Principal = { [K in keyof Principals]: { readonly kind: K } & Readonly<Principals[K]> }[keyof Principals];

export type PrincipalOf<K extends keyof Principals> = Extract<Principal, { kind: K }>;

export interface RequestWithPrincipal extends Request {
  principal?: Principal;
}

/** Parameter decorator: the principal of the given kind, or a 500 if the policy was mis-declared. */
export const CurrentPrincipal = createParamDecorator((kind: Principal['kind'], ctx: ExecutionContext) => {
  const req = ctx.switchToHttp().getRequest<RequestWithPrincipal>();
  if (!req.principal || req.principal.kind !== kind) throw new AppError('server_error');
  return req.principal;
});
