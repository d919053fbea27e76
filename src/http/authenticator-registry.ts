import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Policy } from './policy.decorator';
import type { Principal } from './principal';

/**
 * An authenticator proves one policy for a request and returns the principal, or throws
 * the AppError the policy prescribes. It never writes state.
 */
export interface Authenticator {
  readonly policy: Policy;
  authenticate(req: Request): Promise<Principal>;
}

/** Feature modules register their authenticators here at start-up; the guard looks them up. */
@Injectable()
export class AuthenticatorRegistry {
  private readonly byPolicy = new Map<Policy, Authenticator>();

  register(authenticator: Authenticator): void {
    if (this.byPolicy.has(authenticator.policy)) {
      throw new Error(`authenticator for ${authenticator.policy} registered twice`);
    }
    this.byPolicy.set(authenticator.policy, authenticator);
  }

  get(policy: Policy): Authenticator | undefined {
    return this.byPolicy.get(policy);
  }
}
