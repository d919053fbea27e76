import type { AppConfig } from '../../src/config/config';
import { ERRORS, ok } from '../../src/http/openapi/responses';
import { body } from '../../src/http/openapi/requests';
import { obj, str } from '../../src/http/openapi/schema';
import type { RouteDeclaration } from '../../src/http/route';
import { openApiDocument } from '../../src/openapi/openapi-document';

const config = { authOrigin: 'https://auth.example', consoleOrigin: 'https://console.example' } as AppConfig;

const OPERATION = { operationId: 'op', tags: ['health'], summary: 's', responses: { 200: ok('ok', obj({})) } };
const route = (over: Partial<RouteDeclaration> & Pick<RouteDeclaration, 'path'>): RouteDeclaration => ({
  method: 'GET',
  policy: 'public',
  operation: OPERATION,
  ...over,
});

type Paths = Record<string, Record<string, Record<string, unknown>>>;
const paths = (routes: RouteDeclaration[]): Paths => openApiDocument(config, routes).paths as Paths;

describe('OpenAPI document assembled from route declarations', () => {
  it('writes Express parameters as OpenAPI templates and derives security from the policy', () => {
    const op = paths([route({ path: '/t/:tenantId/me', policy: 'bearer:guest' })])['/t/{tenantId}/me']?.get;
    expect(op).toMatchObject({ operationId: 'op', security: [{ guestBearer: [] }] });
    expect(op).not.toHaveProperty('servers');
  });

  it('names the servers of routes off the auth host: the console host, or every host for probes', () => {
    const doc = paths([
      route({ path: '/healthz' }),
      route({ path: '/api/auth/current', operation: { ...OPERATION, operationId: 'b' } }),
    ]);
    expect(doc['/healthz']?.get?.servers).toEqual([{ url: config.authOrigin }, { url: config.consoleOrigin }]);
    expect(doc['/api/auth/current']?.get?.servers).toEqual([{ url: config.consoleOrigin }]);
  });

  it('adds the contract’s 400 and 413 to every route that takes a body, keeping a route’s own 400', () => {
    const operation = {
      ...OPERATION,
      requestBody: body(obj({ a: str() })),
      responses: { 200: ok('ok', obj({})), 400: ok('own', obj({})) },
    };
    const op = paths([route({ method: 'POST', path: '/t/:tenantId/x', operation })])['/t/{tenantId}/x']?.post;
    expect(op?.responses).toEqual({ 200: operation.responses[200], 400: operation.responses[400], 413: ERRORS[413] });
  });

  it('refuses at start-up a route declared twice, an operationId used twice, an unknown tag or a path no host serves', () => {
    const a = route({ path: '/management/a' });
    expect(() => openApiDocument(config, [a, a])).toThrow(/GET \/management\/a is declared twice/);
    expect(() => openApiDocument(config, [a, route({ path: '/management/b' })])).toThrow(
      /operationId op is used twice/,
    );
    const untagged = route({ path: '/management/a', operation: { ...OPERATION, tags: ['nope'] } });
    expect(() => openApiDocument(config, [untagged])).toThrow(/undeclared tag/);
    expect(() => openApiDocument(config, [route({ path: '/elsewhere' })])).toThrow(/no host serves GET \/elsewhere/);
  });
});
