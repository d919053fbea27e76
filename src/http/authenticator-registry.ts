import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Request } from 'express';
import type { Policy } from './policy.decorator';
import type { Principal } from './principal';

/**
 * An authenticator proves one policy for a request and returns the principal, or throws
 * the AppError the policy prescribes. It never writes state.
 */
export interface Authenticator {
  authenticate(req: Request): Promise<Principal>;
}

/**
 * The one way to register an authenticator: `@AuthenticatorFor('bearer:guest')` on an injectable
 * class that implements Authenticator. The registry finds every such provider at start-up.
 */
export const AuthenticatorFor = DiscoveryService.createDecorator<Exclude<Policy, 'public'>>();

/** Holds the authenticator of each policy; the guard looks them up. */
@Injectable()
export class AuthenticatorRegistry implements OnModuleInit {
  private readonly byPolicy = new Map<Policy, Authenticator>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const provider of this.discovery.getProviders({ metadataKey: AuthenticatorFor.KEY })) {
      const policy = this.discovery.getMetadataByDecorator(AuthenticatorFor, provider);
      if (policy !== undefined) this.register(policy, provider.instance as Authenticator);
    }
  }

  register(policy: Policy, authenticator: Authenticator): void {
    if (this.byPolicy.has(policy)) throw new Error(`authenticator for ${policy} registered twice`);
    this.byPolicy.set(policy, authenticator);
  }

  get(policy: Policy): Authenticator | undefined {
    return this.byPolicy.get(policy);
  }
}
