import { canonicalEmail } from '../../src/directory/email-address';
import { ClientsRepository } from '../../src/directory/clients.repository';
import { IdentitiesRepository } from '../../src/directory/identities.repository';
import { MembershipsRepository } from '../../src/directory/memberships.repository';
import { TenantsRepository } from '../../src/directory/tenants.repository';
import type { MembershipRole } from '../../src/platform/database/entities/membership.entity';
import type { ClientType } from '../../src/platform/database/entities/client.entity';
import type { TestApp } from './test-app';
import { CONTROL_PLANE_TENANT_ID } from '../../src/directory/control-plane';

/**
 * Directory rows for console and management tests, written through the same repositories the
 * admin CLI uses (tenant and client management are not API operations).
 */
export async function controlPlaneUserId(t: TestApp, email: string): Promise<string> {
  return emailUserId(t, CONTROL_PLANE_TENANT_ID, email);
}

/** The user of a tenant with this email identity, created (a regular user) when there is none. */
export async function emailUserId(t: TestApp, tenantId: string, email: string): Promise<string> {
  const address = canonicalEmail(email);
  const { user } = await t.app.get(IdentitiesRepository).resolveOrCreate(
    {
      tenantId,
      provider: 'email',
      providerSubject: address,
      email: address,
      emailVerified: true,
      metadata: {},
    },
    'regular',
  );
  return user.id;
}

export async function createTenant(t: TestApp, id: string, name: string): Promise<void> {
  await t.app.get(TenantsRepository).create(id, name, 'customer');
}

export async function addMember(
  t: TestApp,
  tenantId: string,
  email: string,
  role: MembershipRole = 'developer',
): Promise<string> {
  const userId = await controlPlaneUserId(t, email);
  await t.app.get(MembershipsRepository).upsert(tenantId, userId, role);
  return userId;
}

export async function createClient(
  t: TestApp,
  tenantId: string,
  client: {
    id: string;
    name: string;
    type?: ClientType;
    enabled?: boolean;
    scopes?: string[];
    webOrigins?: string[];
  },
): Promise<void> {
  await t.app.get(ClientsRepository).insert({
    id: client.id,
    tenantId,
    name: client.name,
    type: client.type ?? 'browser',
    enabled: client.enabled ?? true,
    scopes: client.scopes ?? ['openid', 'profile'],
    redirectUris: ['https://game.example/callback'],
    webOrigins: client.webOrigins ?? [],
    secretDigest: null,
  });
}
