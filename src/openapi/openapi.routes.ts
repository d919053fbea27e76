import { ok } from '../http/openapi/responses';
import { str } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';

export const OPENAPI_ROUTES = {
  document: {
    method: 'GET',
    path: '/openapi.json',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getOpenApiDocument',
      tags: ['documentation'],
      summary: 'This document (auth host)',
      responses: {
        200: ok('the OpenAPI 3.1 document', {
          type: 'object',
          properties: { openapi: str({ const: '3.1.0' }), paths: { type: 'object' } },
          required: ['openapi', 'paths'],
        }),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
