import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../errors/app-error';

/** The typed caller an authenticator hands to the controller. */
export type Principal =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'console-client'; readonly clientId: string }
  | {
      readonly kind: 'management';
      readonly userId: string;
      readonly sessionId: string;
      readonly email: string;
      readonly scope: readonly string[];
    }
  | {
      readonly kind: 'guest';
      readonly tenantId: string;
      readonly userId: string;
      readonly sessionId: string;
      readonly clientId: string;
      readonly scope: readonly string[];
    }
  | {
      readonly kind: 'console-session';
      /** sha256 of the console cookie's value: names the server-side record, never the cookie. */
      readonly sessionHandle: string;
      /** The record as the authenticator opened it, so handlers need no second read. */
      readonly session: ConsoleSessionState;
    };

/**
 * A console BFF session (spec 2.2), kept server-side only as AES-GCM ciphertext. Declared here
 * because the principal carries it; only the console BFF reads or writes it. Times are epoch ms.
 */
export interface ConsoleSessionState {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly sessionId: string;
  readonly accessExpiresAt: number;
  /** When to refresh: shortly before the access token expires. */
  readonly refreshAt: number;
  readonly createdAt: number;
  readonly absoluteExpiresAt: number;
}

export type PrincipalOf<K extends Principal['kind']> = Extract<Principal, { kind: K }>;

export interface RequestWithPrincipal extends Request {
  principal?: Principal;
}

/** Parameter decorator: the principal of the given kind, or a 500 if the policy was mis-declared. */
export const CurrentPrincipal = createParamDecorator((kind: Principal['kind'], ctx: ExecutionContext) => {
  const req = ctx.switchToHttp().getRequest<RequestWithPrincipal>();
  if (!req.principal || req.principal.kind !== kind) throw new AppError('server_error');
  return req.principal;
});
