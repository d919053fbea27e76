import { POLICIES, type Policy } from '../../src/http/policy.decorator';
import { routeTable } from '../support/route-table';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Who may call what, route by route, how its answers may be cached (no-store unless the route
 * serves only public data), and which GETs spend or write a one-time record, so HEAD is refused. A change in this table is a change in the service's
 * attack surface and must show up in review: update the list on purpose, never by copy.
 */
const EXPECTED = [
  'GET / -> public, cache: no-store',
  'GET /api/auth/callback -> public, cache: no-store, HEAD refused',
  'GET /api/auth/current -> console-session, cache: no-store',
  'GET /api/management/tenants -> console-session, cache: no-store',
  'GET /api/management/tenants/:id -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/clients -> console-session, cache: no-store',
  'POST /api/management/tenants/:id/clients -> console-session, cache: no-store',
  'PATCH /api/management/tenants/:id/clients/:clientId -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/users -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/users/:userId -> console-session, cache: no-store',
  'POST /api/management/tenants/:id/users/:userId/deactivate -> console-session, cache: no-store',
  'DELETE /api/management/tenants/:id/users/:userId -> console-session, cache: no-store',
  'POST /api/management/tenants/:id/sessions/:sessionId/revoke -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/audit -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/stats -> console-session, cache: no-store',
  'GET /api/management/tenants/:id/members -> console-session, cache: no-store',
  'POST /api/management/tenants/:id/members -> console-session, cache: no-store',
  'DELETE /api/management/tenants/:id/members/:userId -> console-session, cache: no-store',
  'GET /assets/:name -> public, cache: no-cache',
  'GET /healthz -> public, cache: no-store',
  'GET /management-auth/assets/:name -> public, cache: public, max-age=300',
  'GET /management-auth/authorize -> public, cache: no-store, HEAD refused',
  'GET /management-auth/current -> bearer:management, cache: no-store',
  'GET /management/tenants -> bearer:management, cache: no-store',
  'GET /management/tenants/:id -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/clients -> bearer:management, cache: no-store',
  'POST /management/tenants/:id/clients -> bearer:management, cache: no-store',
  'PATCH /management/tenants/:id/clients/:clientId -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/users -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/users/:userId -> bearer:management, cache: no-store',
  'DELETE /management/tenants/:id/users/:userId -> bearer:management, cache: no-store',
  'POST /management/tenants/:id/users/:userId/deactivate -> bearer:management, cache: no-store',
  'POST /management/tenants/:id/sessions/:sessionId/revoke -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/audit -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/stats -> bearer:management, cache: no-store',
  'GET /management/tenants/:id/members -> bearer:management, cache: no-store',
  'POST /management/tenants/:id/members -> bearer:management, cache: no-store',
  'DELETE /management/tenants/:id/members/:userId -> bearer:management, cache: no-store',
  'GET /openapi.json -> public, cache: public, max-age=300',
  'GET /readyz -> public, cache: no-store',
  'GET /t/control-plane/.well-known/jwks.json -> public, cache: public, max-age=300',
  'GET /t/control-plane/.well-known/openid-configuration -> public, cache: public, max-age=300',
  'POST /api/auth/sign-out -> console-session, cache: no-store',
  'POST /api/auth/start -> origin:console, cache: no-store',
  'POST /management-auth/email/confirm -> origin:auth, cache: no-store',
  'POST /management-auth/email/start -> origin:auth, cache: no-store',
  'POST /management-auth/revoke -> bearer:management, cache: no-store',
  'POST /management-auth/revoke-session -> basic:console-client, cache: no-store',
  'POST /management-auth/token -> basic:console-client, cache: no-store',
  'GET /t/:tenantId/.well-known/jwks.json -> public, cache: public, max-age=300',
  'GET /t/:tenantId/.well-known/openid-configuration -> public, cache: public, max-age=300',
  'GET /t/:tenantId/chat/callback -> public, cache: no-store, HEAD refused',
  'GET /t/:tenantId/chat/go -> public, cache: no-store, HEAD refused',
  'GET /t/:tenantId/chat/start -> public, cache: no-store, HEAD refused',
  'GET /t/:tenantId/me -> bearer:guest, cache: no-store',
  'GET /t/:tenantId/providers/:providerId/start -> public, cache: no-store, HEAD refused',
  'GET /t/:tenantId/providers/callback -> public, cache: no-store, HEAD refused',
  'GET /t/:tenantId/providers/go -> public, cache: no-store, HEAD refused',
  'DELETE /t/:tenantId/me -> bearer:guest, cache: no-store',
  'DELETE /t/:tenantId/me/identities/:provider/:providerSubject -> bearer:guest, cache: no-store',
  'POST /t/:tenantId/chat/start -> public, cache: no-store',
  'POST /t/:tenantId/email/start -> public, cache: no-store',
  'POST /t/:tenantId/email/verify -> public, cache: no-store',
  'POST /t/:tenantId/guest -> public, cache: no-store',
  'POST /t/:tenantId/guest/linking-intent -> bearer:guest, cache: no-store',
  'POST /t/:tenantId/guest/upgrade -> bearer:guest, cache: no-store',
  'POST /t/:tenantId/me/identities -> bearer:guest, cache: no-store',
  'POST /t/:tenantId/me/linking-intent -> bearer:guest, cache: no-store',
  'POST /t/:tenantId/providers/:providerId/start -> public, cache: no-store',
  'POST /t/:tenantId/providers/:providerId/token -> public, cache: no-store',
  'POST /t/:tenantId/providers/callback -> public, cache: no-store',
  'POST /t/:tenantId/revoke -> public, cache: no-store',
  'POST /t/:tenantId/sign-in -> public, cache: no-store',
  'POST /t/:tenantId/token -> public, cache: no-store',
].sort();

/**
 * The OpenAPI security scheme that states each policy: a client reads from the document what the
 * guard will ask of it. `public` states none. Stated here apart from src/openapi/route-security.ts,
 * which derives the document's security, so a wrong mapping there fails this suite.
 */
const POLICY_SCHEME: Record<Policy, string | null> = {
  public: null,
  'origin:auth': 'authOrigin',
  'origin:console': 'consoleOrigin',
  'basic:console-client': 'consoleClientBasic',
  'bearer:management': 'managementBearer',
  'bearer:guest': 'guestBearer',
  'console-session': 'consoleSession',
};

/**
 * Schemes that state a credential a handler checks beyond its policy: the control-plane flow
 * cookie, which the email sign-in steps require with the auth Origin (contract 3).
 */
const HANDLER_SCHEMES: Record<string, Policy> = { controlFlowCookie: 'origin:auth' };

/** The security an operation must document for a route with this policy. */
function expectedSecurity(policy: Policy, documented: Record<string, string[]>[]): Record<string, string[]>[] {
  const scheme = POLICY_SCHEME[policy];
  if (!scheme) return [];
  const extra = Object.keys(documented[0] ?? {}).filter((s) => HANDLER_SCHEMES[s] === policy);
  return [Object.fromEntries([scheme, ...extra].map((s) => [s, []]))];
}

describe('route → policy table', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('matches the reviewed list, and no route is without a policy or a declaration', () => {
    const table = routeTable(t.app);
    expect(table.filter((r) => r.includes('NONE') || r.includes('UNDECLARED'))).toEqual([]);
    expect(table).toEqual(EXPECTED);
  });

  it('documents every route’s policy as its OpenAPI security, so the document states who may call what', () => {
    const documented = new Map(
      t.openapi.operations().map((o) => [`${o.method.toUpperCase()} ${o.path}`, o.operation.security ?? []]),
    );
    const rows = routeTable(t.app).map((row) => {
      const [route = '', rest = ''] = row.split(' -> ');
      const policy = rest.split(',')[0] as Policy;
      const key = route.replace(/:(\w+)/g, '{$1}');
      const security = documented.get(key);
      expect({ route, policy: (POLICIES as readonly string[]).includes(policy) }).toEqual({ route, policy: true });
      return { route, policy, security: security ?? 'undocumented' };
    });
    expect(rows).toEqual(
      rows.map((r) => ({
        ...r,
        security: typeof r.security === 'string' ? 'documented' : expectedSecurity(r.policy, r.security),
      })),
    );
  });

  it('refuses HEAD with 405 and Allow: GET on every GET the table marks, and answers HEAD on the others', async () => {
    const rows = routeTable(t.app).filter((r) => r.startsWith('GET '));
    const answers = await Promise.all(
      rows.map(async (row) => {
        const path = (row.split(' ')[1] as string).replace(':tenantId', 'acme').replace(/:\w+/g, 'x');
        const host = path.startsWith('/api/') || path === '/' || path.startsWith('/assets/') ? 'console' : 'auth';
        const res = await t[host]().head(path);
        return `${row.split(' -> ')[0] as string}: ${res.status === 405 ? `405, Allow: ${String(res.headers['allow'])}` : 'not 405'}`;
      }),
    );
    expect(answers).toEqual(
      rows.map(
        (row) => `${row.split(' -> ')[0] as string}: ${row.endsWith('HEAD refused') ? '405, Allow: GET' : 'not 405'}`,
      ),
    );
  });

  it('answers with the cache policy the table declares, no-store where none is declared', async () => {
    const cacheOf = async (host: 'auth' | 'console', path: string): Promise<unknown> =>
      (await t[host]().get(path)).headers['cache-control'];
    expect(await cacheOf('auth', '/t/control-plane/.well-known/jwks.json')).toBe('public, max-age=300');
    expect(await cacheOf('auth', '/management-auth/assets/sign-in.css')).toBe('public, max-age=300');
    expect(await cacheOf('auth', '/openapi.json')).toBe('public, max-age=300');
    expect(await cacheOf('console', '/assets/console.js')).toBe('no-cache');
    expect(await cacheOf('auth', '/healthz')).toBe('no-store');
    expect(await cacheOf('console', '/')).toBe('no-store');
    // Errors are never cached, even on a route that is: an unknown asset is a 404 with no-store.
    expect(await cacheOf('auth', '/management-auth/assets/missing.css')).toBe('no-store');
  });
});
