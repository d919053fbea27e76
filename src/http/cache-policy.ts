import { applyDecorators, Header, SetMetadata } from '@nestjs/common';

/**
 * How a route's answers may be cached. `no-store` is the default for every answer, since most carry
 * tokens, codes, proofs or session data (RFC 6749 §5.1, contract section 2): the response-headers
 * middleware sets it before routing. A route that serves only public, identical-for-everyone data
 * says so with `@UseCachePolicy`. Error answers are always `no-store` (the error filter).
 */
export const CACHE_POLICIES = ['no-store', 'no-cache', 'public, max-age=300'] as const;
export type CachePolicy = (typeof CACHE_POLICIES)[number];

export const DEFAULT_CACHE_POLICY: CachePolicy = 'no-store';
export const CACHE_POLICY_KEY = 'svc:cache-policy';

/**
 * Nest's `@Header` writes the value once per request before the handler runs, with no
 * interceptor: a global interceptor put every route on Nest's rxjs path, which cost more CPU than
 * the rest of the static route together (docs/performance.md).
 */
export const UseCachePolicy = (policy: Exclude<CachePolicy, 'no-store'>): MethodDecorator =>
  applyDecorators(SetMetadata(CACHE_POLICY_KEY, policy), Header('Cache-Control', policy));
