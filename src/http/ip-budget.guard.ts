import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { APP_CONFIG, type AnonymousWrite, type AppConfig } from '../config/config';
import { RateLimiter, type RateLimitCheck } from '../platform/rate-limit/rate-limiter';
import { clientNetworkTiers } from './client-ip';

const IP_BUDGET_KEY = 'svc:ip-budget';

/**
 * Pseudonymisation domain of each budget. Tenant routes share one domain and are not keyed by
 * tenant: a client rotating tenant ids (real or not) must not get a fresh budget, or a fresh
 * key, per id.
 */
const DOMAIN: Record<AnonymousWrite, string> = {
  authorize: 'svc:management',
  'console-start': 'svc:console',
  'chat-start': 'svc:tenant',
  'provider-start': 'svc:tenant',
  'provider-token': 'svc:tenant',
  'email-start': 'svc:tenant',
  'email-verify': 'svc:tenant',
  'guest-create': 'svc:tenant',
  'sign-in': 'svc:tenant',
  'linking-intent': 'svc:tenant',
};

/**
 * Contract section 10: an anonymous route that writes state takes a token from its per-network
 * budget before the handler runs, so a refused request (429 with Retry-After) writes nothing
 * but has been counted, and valid-looking and malformed requests are counted alike. A guard, not
 * an interceptor: it runs after the policy guard and before the pipes, and keeps the route off
 * Nest's rxjs path (docs/performance.md).
 *
 * The client's own network (IPv4 /32, IPv6 /64) has the route's budget; the coarse networks
 * around it (IPv4 /24, IPv6 /56 and /48) have looser ones of their own, so addresses spread over
 * one routed network share a bound. All of them live in the coarsest network's slot and are taken
 * in one script, all or none: a refused request charges none of them.
 */
export const IpBudget = (endpoint: AnonymousWrite): MethodDecorator =>
  applyDecorators(SetMetadata(IP_BUDGET_KEY, endpoint), UseGuards(IpBudgetGuard));

@Injectable()
export class IpBudgetGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const endpoint = this.reflector.get<AnonymousWrite | undefined>(IP_BUDGET_KEY, context.getHandler());
    if (endpoint) {
      const req = context.switchToHttp().getRequest<Request>();
      await this.limiter.hit(...this.checks(endpoint, clientNetworkTiers(req, this.config.trustProxy)));
    }
    return true;
  }

  private checks(endpoint: AnonymousWrite, tiers: ReturnType<typeof clientNetworkTiers>): RateLimitCheck[] {
    const rl = this.config.rateLimits;
    const slot = tiers.at(-1)?.network;
    return tiers.map(({ tier, network }) => {
      const base = { domain: DOMAIN[endpoint], subject: network, ...(slot === undefined ? {} : { slot }) };
      return tier === 'ipv4-32' || tier === 'ipv6-64' || tier === 'other'
        ? { ...base, name: `ip-${endpoint}`, budget: rl.ip[endpoint] }
        : { ...base, name: `ip-${endpoint}-${tier}`, budget: rl.networkTiers[tier], coarseTier: tier };
    });
  }
}
