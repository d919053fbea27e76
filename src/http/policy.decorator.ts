import { SetMetadata } from '@nestjs/common';

/**
 * Who may call a route. Every route declares exactly one policy; a route without one is
 * denied by the global PolicyGuard (deny by default).
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

export const UsePolicy = (policy: Policy): MethodDecorator & ClassDecorator => SetMetadata(POLICY_KEY, policy);
