import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthenticatorFor, type Authenticator } from '../http/authenticator-registry';
import type { Principal } from '../http/principal';
import { SessionStore } from '../platform/session-store/session-store';
import { invalidToken, parseBearer } from '../http/bearer-token';
import { ManagementTokens } from './management-tokens';
import { CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';

declare module '../http/principal' {
  interface Principals {
    /** A developer signed in to the control plane, with a live session (spec section 5). */
    management: {
      readonly userId: string;
      readonly sessionId: string;
      readonly email: string;
      readonly scope: readonly string[];
    };
  }
}

/**
 * The management bearer check (spec section 5), reused by every management route: one cached
 * signature check and one Redis read. The live session in Redis is also what proves the email
 * identity is active: sessions are only created for active identities and are revoked with them.
 * A Redis failure propagates as 503, never as 401, so the BFF keeps healthy console sessions.
 */
@Injectable()
@AuthenticatorFor('bearer:management')
export class ManagementBearerAuthenticator implements Authenticator {
  constructor(
    private readonly tokens: ManagementTokens,
    private readonly sessions: SessionStore,
  ) {}

  async authenticate(req: Request): Promise<Principal> {
    const token = parseBearer(req.headers.authorization);
    const claims = token ? await this.tokens.verify(token) : null;
    if (!claims) throw invalidToken();
    const session = await this.sessions.getBound(claims.sid, {
      tenantId: CONTROL_PLANE_TENANT_ID,
      userId: claims.sub,
      clientId: claims.clientId,
    });
    if (!session) throw invalidToken();
    return { kind: 'management', userId: claims.sub, sessionId: claims.sid, email: session.email, scope: claims.scope };
  }
}
