import { applyDecorators, Delete, Get, HttpCode, Patch, Post, SetMetadata, UseGuards } from '@nestjs/common';
import type { AnonymousWrite } from '../config/config';
import { UseCachePolicy, type CachePolicy } from './cache-policy';
import { takesFormBody } from './body-rules';
import { IpBudget } from './ip-budget.guard';
import { NoBodyGuard } from './no-body.guard';
import { NoHeadGuard } from './no-head.guard';
import type { OpenApiOperation } from './openapi/operation';
import { UsePolicy, type Policy } from './policy.decorator';

const METHODS = { GET: Get, POST: Post, PATCH: Patch, DELETE: Delete } as const;

/** Credentials a handler checks itself beyond its policy, documented with the policy's scheme. */
export type HandlerCredential = 'controlFlowCookie';

/**
 * Everything about one route, stated once, next to its controller (`<module>.routes.ts`): the
 * global guard reads its policy, the IP budget guard its budget, and src/openapi assembles the
 * document from every declaration, deriving the operation's security from the policy.
 */
export interface RouteDeclaration {
  readonly method: keyof typeof METHODS;
  /** The absolute Express path (`/t/:tenantId/guest`); controllers take no prefix. */
  readonly path: string;
  readonly policy: Policy;
  /** The per-network budget an anonymous write takes before the handler runs (contract 10). */
  readonly budget?: AnonymousWrite;
  /** Only for answers that hold nothing but public data; `no-store` otherwise. */
  readonly cache?: Exclude<CachePolicy, 'no-store'>;
  /** The success status, when it is not Nest's default (200, or 201 for POST) nor set by the handler. */
  readonly status?: number;
  readonly handlerChecks?: readonly HandlerCredential[];
  /** A GET that spends or writes a one-time record: HEAD is refused (405), so it spends nothing. */
  readonly sideEffects?: true;
  readonly operation: OpenApiOperation;
}

export const ROUTE_KEY = 'svc:route';

/** Mounts a handler as its declaration says: method and path, status, policy, budget, cache policy. */
export function Route(declaration: RouteDeclaration): MethodDecorator {
  return applyDecorators(
    METHODS[declaration.method](declaration.path),
    ...(declaration.status === undefined ? [] : [HttpCode(declaration.status)]),
    UsePolicy(declaration.policy),
    ...(declaration.sideEffects ? [UseGuards(NoHeadGuard)] : []),
    ...(declaration.budget === undefined ? [] : [IpBudget(declaration.budget)]),
    ...(declaration.cache === undefined ? [] : [UseCachePolicy(declaration.cache)]),
    ...(takesNoBody(declaration) ? [UseGuards(NoBodyGuard)] : []),
    SetMetadata(ROUTE_KEY, declaration),
  );
}

/**
 * A JSON write that declares no request body refuses one (NoBodyGuard); reads never look at it, and
 * a route that takes forms (the console's sign-in button) may carry a form's fields.
 */
export function takesNoBody(declaration: RouteDeclaration): boolean {
  return (
    declaration.method !== 'GET' && declaration.operation.requestBody === undefined && !takesFormBody(declaration.path)
  );
}
