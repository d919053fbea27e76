import type { AppConfig } from '../config/config';
import { hostServing } from '../http/host-routing';
import { pick } from '../http/openapi/responses';
import type { Schema } from '../http/openapi/schema';
import { takesNoBody, type RouteDeclaration } from '../http/route';
import { components } from './components';
import { securityOf } from './route-security';
import { TAGS } from './tags';

/**
 * The OpenAPI 3.1 description of every public endpoint (contract sections 2–6), assembled from the
 * routes' declarations (src/http/route.ts): each states its contract shapes by hand, next to its
 * controller; the document adds what follows from the rest of the declaration (security from the
 * policy, servers from the host that serves the path) and the contract's body errors.
 */
export function openApiDocument(config: AppConfig, routes: readonly RouteDeclaration[]): Record<string, unknown> {
  const auth = [{ url: config.authOrigin }];
  const consoleHost = [{ url: config.consoleOrigin }];
  const servers = { every: [...auth, ...consoleHost], console: consoleHost, auth: undefined };
  const paths: Record<string, Record<string, Schema>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const method = route.method.toLowerCase();
    const host = hostServing(route.path);
    const { operationId, tags } = route.operation;
    if (host === undefined) throw new Error(`OpenAPI: no host serves ${route.method} ${route.path}`);
    if (paths[path]?.[method]) throw new Error(`OpenAPI: ${route.method} ${route.path} is declared twice`);
    if (operationIds.has(operationId)) throw new Error(`OpenAPI: operationId ${operationId} is used twice`);
    if (!tags.every((tag) => TAGS.some((t) => t.name === tag)))
      throw new Error(`OpenAPI: ${operationId} names an undeclared tag (${tags.join(', ')})`);
    operationIds.add(operationId);
    paths[path] = { ...paths[path], [method]: operation(route, servers[host]) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc-auth',
      version: '1',
      description: 'Management sign-in, console BFF and guest authentication. Routing is by Host.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: auth,
    tags: TAGS,
    paths,
    components: components(config),
  };
}

function operation(route: RouteDeclaration, servers: Schema[] | undefined): Schema {
  const { operation } = route;
  return {
    ...operation,
    security: securityOf(route),
    // Contract 2: a body may be malformed, of the wrong type or over 16 KiB on any route that takes
    // one; a write that takes none refuses any (NoBodyGuard). HEAD, answered by the GET route,
    // spends nothing (NoHeadGuard).
    responses: {
      ...(operation.requestBody || takesNoBody(route) ? pick(400, 413) : {}),
      ...operation.responses,
      ...(route.sideEffects ? pick(405) : {}),
    },
    ...(servers ? { servers } : {}),
  };
}
