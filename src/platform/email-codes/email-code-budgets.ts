import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type RateLimitBudget } from '../../config/config';
import { RateLimiter, type RateLimitCheck } from '../rate-limit/rate-limiter';
import { EmailCodesStore, type CodeRealm } from './email-codes.store';

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
 * - per address in all: the bound on guessing across flows (each code allows
 *   EMAIL_CODE_MAX_ATTEMPTS). It applies only to a flow that holds no live code for the address:
 *   the flow that holds one is slowed by its own per-flow budget, never blocked by others'
 *   sends. Someone who spends it from many networks delays a *new* sign-in of that address until
 *   the bucket refills (one code every WINDOW/LIMIT), and can never invalidate a code already
 *   sent, nor make its right answer fail.
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
   * share the address's slot, so they are taken in one round trip, all or none.
   */
  async beforeSend(realm: CodeRealm, send: CodeSend, perNetwork: RateLimitBudget): Promise<void> {
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
  }
}
