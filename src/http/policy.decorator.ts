import { SetMetadata } from '@nestjs/common';

/**
 * Who may call a route. Every route declares exactly one policy, in its declaration
 * (src/http/route.ts); a route without one is denied by the global PolicyGuard (deny by default).
 */
export const POLICIES = [
  'public',
  'origin:auth',
  'origin:console',
  'basic:console-client',
  'bearer:management',
  'bearer:guest',
  'console-session',
] as const;

export type Policy = (typeof POLICIES)[number];

export const POLICY_KEY = 'svc:policy';

/** Per handler, never per controller: a route's policy is read where the route is declared. */
export const UsePolicy = (policy: Policy): MethodDecorator => SetMetadata(POLICY_KEY, policy);
