import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthenticatorFor, type Authenticator } from '../http/authenticator-registry';
import type { Principal } from '../http/principal';
import { invalidToken, parseBearer } from '../http/bearer-token';
import { SessionStore } from '../platform/session-store/session-store';
import { CustomerTokens } from './customer-tokens';

declare module '../http/principal' {
  interface Principals {
    /** A guest or upgraded player of a customer tenant, with a live session (spec 4.3). */
    guest: {
      readonly tenantId: string;
      readonly userId: string;
      readonly sessionId: string;
      readonly clientId: string;
      readonly scope: readonly string[];
    };
  }
}

/**
 * Spec 4.3: the guest token's signature and its live session are verified for the tenant of the
 * route. One cached signature check and one Redis read; Redis failures are 503, never 401.
 */
@Injectable()
@AuthenticatorFor('bearer:guest')
export class GuestBearerAuthenticator implements Authenticator {
  constructor(
    private readonly tokens: CustomerTokens,
    private readonly sessions: SessionStore,
  ) {}

  async authenticate(req: Request): Promise<Principal> {
    const tenantId = req.params['tenantId'];
    const token = parseBearer(req.headers.authorization);
    const claims = token && typeof tenantId === 'string' ? await this.tokens.verifyAccess(token, tenantId) : null;
    if (!claims) throw invalidToken();
    const bound = { tenantId: claims.tenantId, userId: claims.sub, clientId: claims.clientId };
    if (!(await this.sessions.getBound(claims.sid, bound))) throw invalidToken();
    return {
      kind: 'guest',
      tenantId: claims.tenantId,
      userId: claims.sub,
      sessionId: claims.sid,
      clientId: claims.clientId,
      scope: claims.scope,
    };
  }
}
