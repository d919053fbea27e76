import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { AuthenticatorRegistry, type Authenticator } from '../http/authenticator-registry';
import { readCookie } from '../http/cookies';
import { originMatches } from '../http/origin.authenticators';
import type { Principal } from '../http/principal';
import { CONSOLE_COOKIE, isCookieValue, sessionEnded } from './console-cookies';
import { ConsoleSessionsStore, sessionHandleOf } from './console-sessions.store';

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
export class ConsoleSessionAuthenticator implements Authenticator, OnModuleInit {
  readonly policy = 'console-session' as const;

  constructor(
    private readonly registry: AuthenticatorRegistry,
    private readonly store: ConsoleSessionsStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  async authenticate(req: Request): Promise<Principal> {
    if (!SAFE_METHODS.has(req.method) && !originMatches(req, this.config.consoleOrigin)) {
      throw new AppError('forbidden', 'The Origin header does not match this service.');
    }
    const cookie = readCookie(req.headers.cookie, CONSOLE_COOKIE);
    if (!isCookieValue(cookie))
      throw sessionEnded(cookie !== undefined || (req.headers.cookie ?? '').includes(`${CONSOLE_COOKIE}=`));
    const sessionHandle = sessionHandleOf(cookie);
    const stored = await this.store.read(sessionHandle);
    if (!stored || Date.now() >= stored.record.absoluteExpiresAt) throw sessionEnded();
    return { kind: 'console-session', sessionHandle, session: stored.record };
  }
}
