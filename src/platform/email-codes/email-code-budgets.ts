import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type RateLimitBudget } from '../../config/config';
import { RateLimiter, type RateLimitCheck } from '../rate-limit/rate-limiter';
import { CODE_ALLOWANCE_SECONDS, EmailCodesStore, type CodeAllowance, type CodeRealm } from './email-codes.store';

export interface CodeSend {
  readonly flowId: string;
  /** Canonical address. */
  readonly email: string;
  /** The client network (IPv4 address or IPv6 /64). */
  readonly network: string;
}

/**
 * Who may have a code sent, so that no one can lock the rightful user out (contract section 10)
 * while the guesses an attacker gets at one address stay bounded:
 * - per address and network: a client cannot spend an address's budget for everyone else;
 * - per address and flow: resends within one flow;
 * - per address in all: the bound on guessing across flows (each fresh code buys
 *   EMAIL_CODE_MAX_ATTEMPTS, see emailGuessBound). It applies only to a flow that holds no live
 *   code for the address: the flow that holds one resends within its own per-flow budget and
 *   keeps its attempt count, so its resends buy no guesses and are never blocked by others'
 *   sends. Someone who spends it from many networks delays a *new* sign-in of that address until
 *   the bucket refills (one code every WINDOW/LIMIT), and can never invalidate a code already
 *   sent, nor make its right answer fail: guesses count only against the code of the flow they
 *   are made in (contract section 10).
 */
@Injectable()
export class EmailCodeBudgets {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly limiter: RateLimiter,
    private readonly codes: EmailCodesStore,
  ) {}

  /**
   * Throws 429 when a budget refuses; checked before anything of the send is written. The budgets
   * share the address's slot, so they are taken in one round trip, all or none. Says whether the
   * code to send buys fresh attempts (the per-address budget paid) or keeps the flow's count.
   */
  async beforeSend(realm: CodeRealm, send: CodeSend, perNetwork: RateLimitBudget): Promise<CodeAllowance> {
    const rl = this.config.rateLimits;
    const budget = (name: string, subject: string, limit: RateLimitBudget): RateLimitCheck => ({
      name,
      domain: realm.domain,
      subject,
      budget: limit,
      slot: send.email,
    });
    const holdsLiveCode = await this.codes.holdsLiveCode(realm, send.flowId, send.email);
    await this.limiter.hit(
      budget('code-send-network', `${send.email}\0${send.network}`, perNetwork),
      ...(holdsLiveCode ? [] : [budget('code-send-address', send.email, rl.emailSendAddress)]),
      budget('code-send-flow', `${send.email}\0${send.flowId}`, rl.emailSendFlow),
    );
    return holdsLiveCode ? 'kept' : 'fresh';
  }
}

/**
 * The most wrong guesses at one address's codes in any hour (OWASP ASVS V2.2.1 asks for at most
 * 100), from the per-address budget: a GCRA bucket of LIMIT per WINDOW lets at most
 * floor(D / (WINDOW / LIMIT)) + LIMIT sends through in any span of D seconds, each fresh send buys
 * EMAIL_CODE_MAX_ATTEMPTS guesses, resends buy none, and a fresh send's guesses are spent within
 * CODE_ALLOWANCE_SECONDS of it; so the guesses of one hour come from sends of an hour and that
 * allowance before it.
 */
export function emailGuessBound(config: Pick<AppConfig, 'rateLimits' | 'ttl'>, hourSeconds = 3600): number {
  const { limit, windowSeconds } = config.rateLimits.emailSendAddress;
  const sends = Math.floor(((hourSeconds + CODE_ALLOWANCE_SECONDS) * limit) / windowSeconds) + limit;
  return sends * config.ttl.emailCodeMaxAttempts;
}
