import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '../errors/app-error';
import { loggedPath } from '../platform/logging/logging';
import { AuthenticatorRegistry } from './authenticator-registry';
import { POLICY_KEY, type Policy } from './policy.decorator';
import type { RequestWithPrincipal } from './principal';

/** The one global guard: reads the route's declared policy and runs its authenticator. */
@Injectable()
export class PolicyGuard implements CanActivate {
  private readonly logger = new Logger('PolicyGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly registry: AuthenticatorRegistry,
  ) {}

  /** Synchronous for public routes: an async guard costs every static answer a promise and a microtask. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const policy = this.reflector.get<Policy | undefined>(POLICY_KEY, context.getHandler());
    const req = context.switchToHttp().getRequest<RequestWithPrincipal>();
    if (policy === undefined) {
      this.logger.error({ path: loggedPath(req.path) }, 'route without a declared policy denied');
      throw new AppError('forbidden');
    }
    if (policy === 'public') {
      req.principal = { kind: 'anonymous' };
      return true;
    }
    const authenticator = this.registry.get(policy);
    if (!authenticator) {
      this.logger.error({ policy }, 'no authenticator registered for policy');
      throw new AppError('forbidden');
    }
    return authenticator.authenticate(req).then((principal) => {
      req.principal = principal;
      return true;
    });
  }
}
