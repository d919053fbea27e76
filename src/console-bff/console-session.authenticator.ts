import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { AuthenticatorFor, type Authenticator } from '../http/authenticator-registry';
import { readCookie } from '../http/cookies';
import { originMatches } from '../http/origin.authenticators';
import type { Principal } from '../http/principal';
import { CONSOLE_COOKIE, isCookieValue } from './console-cookies';
import { ConsoleSessionEndedError } from './console-session-ended';
import { ConsoleSessionsStore, sessionHandleOf, type ConsoleSessionState } from './console-sessions.store';

declare module '../http/principal' {
  interface Principals {
    'console-session': {
      /** sha256 of the console cookie's value: names the server-side record, never the cookie. */
      readonly sessionHandle: string;
      /** The record as the authenticator opened it, so handlers need no second read. */
      readonly session: ConsoleSessionState;
    };
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * The `console-session` policy (spec section 5: "BFF other calls: cookie"). One Redis read.
 * - State-changing methods also need the exact console Origin (spec 4.1, contract section 4),
 *   checked first, on top of SameSite=Strict.
 * - A missing, unknown, tampered (fails AES-GCM), moved (wrong associated data), idle-expired
 *   (Redis TTL) or absolutely expired record is 401, and the answer expires the cookie.
 * - Redis unavailable propagates as 503 and leaves the cookie alone: an outage never signs
 *   anyone out.
 * Writes nothing: extending the idle clock is the handler's job.
 */
@Injectable()
@AuthenticatorFor('console-session')
export class ConsoleSessionAuthenticator implements Authenticator {
  constructor(
    private readonly store: ConsoleSessionsStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async authenticate(req: Request): Promise<Principal> {
    if (!SAFE_METHODS.has(req.method) && !originMatches(req, this.config.consoleOrigin)) {
      throw new AppError('forbidden', 'The Origin header does not match this service.');
    }
    const cookie = readCookie(req.headers.cookie, CONSOLE_COOKIE);
    if (!isCookieValue(cookie))
      throw new ConsoleSessionEndedError(
        cookie !== undefined || (req.headers.cookie ?? '').includes(`${CONSOLE_COOKIE}=`),
      );
    const sessionHandle = sessionHandleOf(cookie);
    const stored = await this.store.read(sessionHandle);
    if (!stored || Date.now() >= stored.record.absoluteExpiresAt) throw new ConsoleSessionEndedError();
    return { kind: 'console-session', sessionHandle, session: stored.record };
  }
}
