import { Injectable } from '@nestjs/common';
import { ChatPlatformAppsRepository } from '../directory/chat-platform-apps.repository';
import { ClientsRepository } from '../directory/clients.repository';
import { ControlPlaneSeedService } from '../directory/control-plane-seed.service';
import { isCustomerScope } from '../directory/customer-scopes';
import { canonicalEmail } from '../directory/email-address';
import { IdentitiesRepository } from '../directory/identities.repository';
import { canonicalWebOrigin, webOriginsOf } from '../directory/web-origins';
import { MembershipsRepository } from '../directory/memberships.repository';
import { CONTROL_PLANE_TENANT_ID, TenantsRepository } from '../directory/tenants.repository';
import { MEMBERSHIP_ROLES, type MembershipRole } from '../platform/database/entities/membership.entity';

export class AdminInputError extends Error {}

const TENANT_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const CLIENT_ID = /^cli_[A-Za-z0-9_-]{1,64}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

function httpUrl(value: string, name: string): string {
  try {
    const u = new URL(value);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.toString();
  } catch {
    // fall through
  }
  throw new AdminInputError(`${name} must be an http(s) URL`);
}

/** `--web-origins "https://a.example https://b.example"`: unique http(s) origins, browser clients only. */
function parseWebOrigins(value: string, type: string): string[] {
  const given = value.split(' ').filter(Boolean);
  if (given.length > 0 && type !== 'browser') throw new AdminInputError('--web-origins is for browser clients only');
  const origins = given.map((v) => {
    const origin = canonicalWebOrigin(v);
    if (origin === null)
      throw new AdminInputError(`--web-origins: ${v} is not an http(s) origin (scheme://host[:port])`);
    return origin;
  });
  return [...new Set(origins)];
}

/** Tenant, client, membership and chat-platform administration: not API operations (spec 4.2). */
@Injectable()
export class AdminService {
  constructor(
    private readonly seedService: ControlPlaneSeedService,
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
    private readonly identities: IdentitiesRepository,
    private readonly memberships: MembershipsRepository,
    private readonly chatApps: ChatPlatformAppsRepository,
  ) {}

  seedControlPlane(): Promise<unknown> {
    return this.seedService.seed();
  }

  async createTenant(id: string, name: string): Promise<unknown> {
    if (!TENANT_ID.test(id) || id === CONTROL_PLANE_TENANT_ID)
      throw new AdminInputError('--id must match ^[a-z0-9][a-z0-9-]{1,62}$ and not be control-plane');
    if (!name || name.length > 200) throw new AdminInputError('--name is required (at most 200 characters)');
    if (await this.tenants.find(id)) throw new AdminInputError(`tenant ${id} already exists`);
    const t = await this.tenants.create(id, name, 'customer');
    return { tenant: { id: t.id, name: t.name, status: t.status } };
  }

  async deactivateTenant(id: string): Promise<unknown> {
    if (!(await this.tenants.setStatus(id, 'inactive'))) throw new AdminInputError(`no customer tenant ${id}`);
    return { tenant: { id, status: 'inactive' } };
  }

  async createClient(input: {
    tenant: string;
    id: string;
    name: string;
    type: string;
    scopes: string;
    redirectUris: string[];
    /** Space-separated origins (contract section 11); browser clients only. */
    webOrigins: string;
  }): Promise<unknown> {
    const tenant = await this.tenants.find(input.tenant);
    if (!tenant || tenant.kind !== 'customer') throw new AdminInputError(`no customer tenant ${input.tenant}`);
    if (!CLIENT_ID.test(input.id)) throw new AdminInputError('--id must match ^cli_[A-Za-z0-9_-]{1,64}$');
    if (input.type !== 'browser' && input.type !== 'native')
      throw new AdminInputError('--type must be browser or native');
    if (!input.name) throw new AdminInputError('--name is required');
    const scopes = input.scopes.split(' ').filter(Boolean);
    const bad = scopes.find((s) => !isCustomerScope(s));
    if (bad !== undefined || new Set(scopes).size !== scopes.length)
      throw new AdminInputError('--scopes must be unique values of: openid profile email offline_access');
    const redirectUris = input.redirectUris.map((u) => httpUrl(u, '--redirect-uri'));
    const webOrigins = parseWebOrigins(input.webOrigins, input.type);
    if (await this.clients.find(input.id)) throw new AdminInputError(`client ${input.id} already exists`);
    await this.clients.insert({
      id: input.id,
      tenantId: input.tenant,
      name: input.name,
      type: input.type,
      enabled: true,
      scopes,
      redirectUris,
      webOrigins,
      secretDigest: null,
    });
    return {
      client: {
        client_id: input.id,
        tenant: input.tenant,
        name: input.name,
        type: input.type,
        enabled: true,
        scopes,
        redirect_uris: redirectUris,
        web_origins: webOriginsOf({ type: input.type, redirectUris, webOrigins }),
      },
    };
  }

  async disableClient(tenant: string, id: string): Promise<unknown> {
    if (tenant === CONTROL_PLANE_TENANT_ID || !(await this.clients.disable(tenant, id)))
      throw new AdminInputError(`no client ${id} in tenant ${tenant}`);
    return { client: { client_id: id, enabled: false } };
  }

  async addMembership(tenantId: string, rawEmail: string, role: string): Promise<unknown> {
    const tenant = await this.tenants.find(tenantId);
    if (!tenant || tenant.kind !== 'customer') throw new AdminInputError(`no customer tenant ${tenantId}`);
    if (!(MEMBERSHIP_ROLES as readonly string[]).includes(role))
      throw new AdminInputError(`--role must be one of ${MEMBERSHIP_ROLES.join(', ')}`);
    const email = canonicalEmail(rawEmail);
    if (!EMAIL.test(email)) throw new AdminInputError('--email must be an email address');
    // The developer may not have signed in yet: the control-plane user and identity are created
    // now and resolved at their first sign-in.
    const { user } = await this.identities.resolveOrCreate(
      {
        tenantId: CONTROL_PLANE_TENANT_ID,
        provider: 'email',
        providerSubject: email,
        email,
        emailVerified: true,
        metadata: {},
      },
      'regular',
    );
    await this.memberships.upsert(tenantId, user.id, role as MembershipRole);
    return { membership: { tenant: tenantId, user_id: user.id, role } };
  }

  async removeMembership(tenantId: string, rawEmail: string): Promise<unknown> {
    const identity = await this.identities.findIdentity(CONTROL_PLANE_TENANT_ID, 'email', canonicalEmail(rawEmail));
    const removed = identity ? await this.memberships.remove(tenantId, identity.userId) : false;
    if (!removed) throw new AdminInputError('no such membership');
    return { membership: { tenant: tenantId, removed: true } };
  }

  async configureChat(input: {
    tenant: string;
    clientId: string;
    clientSecret: string;
    redirectUri: string;
  }): Promise<unknown> {
    const tenant = await this.tenants.find(input.tenant);
    if (!tenant || tenant.kind !== 'customer') throw new AdminInputError(`no customer tenant ${input.tenant}`);
    if (!input.clientId || !input.clientSecret)
      throw new AdminInputError('--client-id and --client-secret are required');
    const redirectUri = httpUrl(input.redirectUri, '--redirect-uri');
    await this.chatApps.configure({
      tenantId: input.tenant,
      clientId: input.clientId,
      clientSecret: input.clientSecret,
      redirectUri,
    });
    return { chat_platform: { tenant: input.tenant, client_id: input.clientId, redirect_uri: redirectUri } };
  }
}
