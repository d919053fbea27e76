import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import type { Observable } from 'rxjs';

/**
 * How a route's answers may be cached. `no-store` is the default for every route, since most carry
 * tokens, codes, proofs or session data (RFC 6749 §5.1, contract section 2); a route that serves
 * only public, identical-for-everyone data says so with `@UseCachePolicy`. Error answers are
 * always `no-store` (the error filter).
 */
export const CACHE_POLICIES = ['no-store', 'no-cache', 'public, max-age=300'] as const;
export type CachePolicy = (typeof CACHE_POLICIES)[number];

export const DEFAULT_CACHE_POLICY: CachePolicy = 'no-store';
export const CACHE_POLICY_KEY = 'svc:cache-policy';

export const UseCachePolicy = (policy: Exclude<CachePolicy, 'no-store'>): MethodDecorator & ClassDecorator =>
  SetMetadata(CACHE_POLICY_KEY, policy);

/** Sets the route's `Cache-Control` before the handler runs, so no handler has to remember it. */
@Injectable()
export class CachePolicyInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const policy =
      this.reflector.getAllAndOverride<CachePolicy | undefined>(CACHE_POLICY_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? DEFAULT_CACHE_POLICY;
    context.switchToHttp().getResponse<Response>().setHeader('Cache-Control', policy);
    return next.handle();
  }
}
