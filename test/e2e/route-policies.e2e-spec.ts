import { routeTable } from '../support/route-table';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Who may call what, route by route. A change in this table is a change in the service's
 * attack surface and must show up in review: update the list on purpose, never by copy.
 */
const EXPECTED = [
  'GET / -> public',
  'GET /api/auth/callback -> public',
  'GET /api/auth/current -> console-session',
  'GET /api/management/tenants -> console-session',
  'GET /api/management/tenants/:id -> console-session',
  'GET /api/management/tenants/:id/clients -> console-session',
  'GET /assets/:name -> public',
  'GET /healthz -> public',
  'GET /management-auth/assets/:name -> public',
  'GET /management-auth/authorize -> public',
  'GET /management-auth/current -> bearer:management',
  'GET /management/tenants -> bearer:management',
  'GET /management/tenants/:id -> bearer:management',
  'GET /management/tenants/:id/clients -> bearer:management',
  'GET /openapi.json -> public',
  'GET /readyz -> public',
  'GET /t/control-plane/.well-known/jwks.json -> public',
  'GET /t/control-plane/.well-known/openid-configuration -> public',
  'POST /api/auth/sign-out -> console-session',
  'POST /api/auth/start -> origin:console',
  'POST /management-auth/email/confirm -> origin:auth',
  'POST /management-auth/email/start -> origin:auth',
  'POST /management-auth/revoke -> bearer:management',
  'POST /management-auth/revoke-session -> basic:console-client',
  'POST /management-auth/token -> basic:console-client',
  'GET /t/:tenantId/.well-known/jwks.json -> public',
  'GET /t/:tenantId/.well-known/openid-configuration -> public',
  'GET /t/:tenantId/chat/callback -> public',
  'GET /t/:tenantId/chat/start -> public',
  'POST /t/:tenantId/chat/start -> public',
  'POST /t/:tenantId/email/start -> public',
  'POST /t/:tenantId/email/verify -> public',
  'POST /t/:tenantId/guest -> public',
  'POST /t/:tenantId/guest/linking-intent -> bearer:guest',
  'POST /t/:tenantId/guest/upgrade -> bearer:guest',
  'POST /t/:tenantId/revoke -> public',
  'POST /t/:tenantId/sign-in -> public',
  'POST /t/:tenantId/token -> public',
].sort();

describe('route → policy table', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('matches the reviewed list, and no route is without a policy', () => {
    const table = routeTable(t.app);
    expect(table.filter((r) => r.includes('NONE'))).toEqual([]);
    expect(table).toEqual(EXPECTED);
  });
});
