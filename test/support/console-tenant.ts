import type { Test } from 'supertest';
import type { MembershipRole } from '../../src/platform/database/entities/membership.entity';
import { addMember, createTenant } from './console-fixtures';
import { CONSOLE_SCOPES, signIn, type ManagementTokens } from './management-flow';
import { startTestApp, type TestApp } from './test-app';

export const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const satisfies readonly MembershipRole[];

export type Caller = MembershipRole | 'outsider' | 'read-only admin';

/** Management API calls with one caller's bearer, on the auth host. */
export interface ManagementAgent {
  get(path: string): Test;
  post(path: string, body?: object): Test;
  patch(path: string, body: object): Test;
  delete(path: string): Test;
}

/**
 * Tenant `acme` with one member of each role, signed in as the console signs in (tenant:read and
 * tenant:write), an admin signed in with tenant:read only, and a developer of another tenant.
 */
export interface ConsoleTenant {
  readonly t: TestApp;
  readonly tenantId: 'acme';
  readonly tokens: Readonly<Record<Caller, ManagementTokens>>;
  /** The control-plane user id of each member. */
  readonly userIds: Readonly<Record<Caller, string>>;
  as(caller: Caller): ManagementAgent;
  close(): Promise<void>;
}

export const emailOf = (caller: Caller): string => `${caller.replace(/ /g, '-')}@studio.example`;

export async function startConsoleTenant(overrides: Record<string, string> = {}): Promise<ConsoleTenant> {
  const t = await startTestApp({ RATE_LIMITS: 'off', ...overrides });
  await createTenant(t, 'acme', 'Acme Games');
  await createTenant(t, 'other-team', 'Other Team');
  const userIds = {} as Record<Caller, string>;
  const tokens = {} as Record<Caller, ManagementTokens>;
  for (const role of ROLES) {
    userIds[role] = await addMember(t, 'acme', emailOf(role), role);
    tokens[role] = await signIn(t, emailOf(role), CONSOLE_SCOPES);
  }
  userIds['read-only admin'] = await addMember(t, 'acme', emailOf('read-only admin'), 'admin');
  tokens['read-only admin'] = await signIn(t, emailOf('read-only admin'), 'tenant:read');
  userIds.outsider = await addMember(t, 'other-team', emailOf('outsider'), 'owner');
  tokens.outsider = await signIn(t, emailOf('outsider'), CONSOLE_SCOPES);
  const as = (caller: Caller): ManagementAgent => {
    const auth = `Bearer ${tokens[caller].access_token}`;
    return {
      get: (path) => t.auth().get(path).set('Authorization', auth),
      post: (path, body) => {
        const req = t.auth().post(path).set('Authorization', auth);
        return body === undefined ? req : req.send(body);
      },
      patch: (path, body) => t.auth().patch(path).set('Authorization', auth).send(body),
      delete: (path) => t.auth().delete(path).set('Authorization', auth),
    };
  };
  return { t, tenantId: 'acme', tokens, userIds, as, close: () => t.close() };
}

/** Audit rows of a type in a tenant, oldest first. */
export async function auditRows(
  t: TestApp,
  tenantId: string,
  type: string,
): Promise<Array<{ subject: string; data: Record<string, unknown> }>> {
  const { rows } = await t.pg.query<{ subject: string; data: Record<string, unknown> }>(
    'SELECT subject, data FROM audit_events WHERE tenant_id = $1 AND type = $2 ORDER BY id',
    [tenantId, type],
  );
  return rows;
}

/** An event of the tenant's trail as `GET …/audit` answers it. */
export interface AuditEvent {
  id: string;
  type: string;
  subject: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** Every page of acme's trail as its viewer reads it, following next_before, with each page's size. */
export async function auditTrail(
  w: ConsoleTenant,
  query: Record<string, string> = {},
): Promise<{ events: AuditEvent[]; pages: number[] }> {
  const events: AuditEvent[] = [];
  const pages: number[] = [];
  let before: string | null = null;
  do {
    const res = await w
      .as('viewer')
      .get(`/management/tenants/${w.tenantId}/audit`)
      .query({ ...query, ...(before === null ? {} : { before }) })
      .expect(200);
    events.push(...(res.body.events as AuditEvent[]));
    pages.push(res.body.events.length as number);
    before = res.body.next_before as string | null;
  } while (before !== null);
  return { events, pages };
}
