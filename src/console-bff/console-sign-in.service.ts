import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { isDependencyFailure } from '../errors/dependency-failure';
import { safeEqual } from '../platform/crypto/digests';
import { ConsoleApiClient, type CallbackParams } from './console-api.client';
import { CONSOLE_COOKIE_MAX_AGE_LIMIT_SECONDS, isCookieValue } from './console-cookies';
import { ConsoleSessionService } from './console-session.service';
import { ConsoleSessionsStore } from './console-sessions.store';
import { PendingSignInsStore } from './pending-sign-ins.store';

/** The closed set of `/?error=` codes the console page explains in words (contract section 4). */
export type CallbackError = 'invalid_state' | 'sign_in_failed' | 'temporarily_unavailable';

export type CallbackOutcome =
  | { readonly kind: 'signed-in'; readonly cookie: string; readonly maxAgeSeconds: number }
  | { readonly kind: 'failed'; readonly error: CallbackError };

/** Console sign-in (spec 3, 4.1): start builds the authorization request, callback completes it. */
@Injectable()
export class ConsoleSignInService {
  private readonly logger = new Logger('ConsoleSignInService');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly api: ConsoleApiClient,
    private readonly pending: PendingSignInsStore,
    private readonly sessions: ConsoleSessionsStore,
    private readonly sessionService: ConsoleSessionService,
  ) {}

  /** A new state and PKCE verifier, stored sealed and bound to a fresh flow cookie. */
  async start(): Promise<{ location: string; flowCookie: string }> {
    const checks = this.api.newChecks();
    const location = await this.api.authorizationUrl(checks.state, checks.codeVerifier);
    const flowCookie = await this.pending.create(checks);
    return { location, flowCookie };
  }

  /**
   * Never throws: the callback always answers a redirect to the page (contract section 4).
   * The pending record is consumed before anything is compared, so a state mismatch or a
   * replayed callback also ends the flow (spec 3: consumed once).
   */
  async callback(
    flowCookie: string | undefined,
    params: CallbackParams,
    requestId: string | undefined,
  ): Promise<CallbackOutcome> {
    try {
      if (!isCookieValue(flowCookie)) return failed('invalid_state');
      const pending = await this.pending.consume(flowCookie);
      if (!pending || params.state === undefined || !safeEqual(params.state, pending.state))
        return failed('invalid_state');
      const outcome = await this.api.exchange(params, pending, requestId);
      if (outcome.kind !== 'granted') {
        this.logger.warn({ outcome: outcome.kind, reason: outcome.reason }, 'console sign-in callback failed');
        return failed(outcome.kind === 'rejected' ? 'sign_in_failed' : 'temporarily_unavailable');
      }
      const now = Date.now();
      const record = this.sessionService.recordFor(outcome.grant, now);
      const cookie = await this.sessions.create(record, this.sessionService.ttlSeconds(record, now));
      // Spec 2.2: the cookie expires within one day, and never outlives the absolute lifetime.
      const maxAgeSeconds = Math.min(CONSOLE_COOKIE_MAX_AGE_LIMIT_SECONDS, this.config.ttl.consoleSessionAbsolute);
      return { kind: 'signed-in', cookie, maxAgeSeconds };
    } catch (err) {
      if (isDependencyFailure(err)) return failed('temporarily_unavailable');
      this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'console sign-in callback error');
      return failed('sign_in_failed');
    }
  }
}

const failed = (error: CallbackError): CallbackOutcome => ({ kind: 'failed', error });
