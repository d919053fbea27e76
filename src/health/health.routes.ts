import { ok } from '../http/openapi/responses';
import { obj, ref, str } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';

/** Liveness and readiness, on every host (contract section 1). */
export const HEALTH_ROUTES = {
  liveness: {
    method: 'GET',
    path: '/healthz',
    policy: 'public',
    operation: {
      operationId: 'getLiveness',
      tags: ['health'],
      summary: 'Liveness (every host)',
      responses: { 200: ok('alive', obj({ status: str({ const: 'ok' }) })) },
    },
  },
  readiness: {
    method: 'GET',
    path: '/readyz',
    policy: 'public',
    operation: {
      operationId: 'getReadiness',
      tags: ['health'],
      summary: 'Readiness: PostgreSQL and Redis reachable, Redis not evicting, not shutting down (every host)',
      responses: {
        200: ok('ready', ref('Ready')),
        503: ok('not ready: temporarily_unavailable with the checks', ref('NotReady')),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
