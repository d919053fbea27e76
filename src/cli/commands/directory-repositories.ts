import { ChatPlatformAppsRepository } from '../../directory/chat-platform-apps.repository';
import { ClientsRepository } from '../../directory/clients.repository';
import { IdentitiesRepository } from '../../directory/identities.repository';
import { IdentityEmailDigest } from '../../directory/identity-email-digest';
import { IdentityProvidersRepository } from '../../directory/identity-providers.repository';
import { MembershipsRepository } from '../../directory/memberships.repository';
import { TenantsRepository } from '../../directory/tenants.repository';
import type { Pseudonymizer } from '../../platform/crypto/digests';
import { ChatPlatformAppEntity } from '../../platform/database/entities/chat-platform-app.entity';
import { ClientEntity } from '../../platform/database/entities/client.entity';
import { IdentityProviderEntity } from '../../platform/database/entities/identity-provider.entity';
import { MembershipEntity } from '../../platform/database/entities/membership.entity';
import { TenantEntity } from '../../platform/database/entities/tenant.entity';
import { AdminInputError } from '../admin-command';
import type { CliContext } from '../cli-context';

/** The service's own repositories, built over the CLI's data source (no Nest container needed). */
export async function tenantsRepository(ctx: CliContext): Promise<TenantsRepository> {
  return new TenantsRepository((await ctx.db()).getRepository(TenantEntity));
}

export async function clientsRepository(ctx: CliContext): Promise<ClientsRepository> {
  return new ClientsRepository((await ctx.db()).getRepository(ClientEntity));
}

export async function membershipsRepository(ctx: CliContext): Promise<MembershipsRepository> {
  return new MembershipsRepository((await ctx.db()).getRepository(MembershipEntity));
}

export async function identitiesRepository(ctx: CliContext): Promise<IdentitiesRepository> {
  return new IdentitiesRepository(await ctx.db(), identityEmailDigest(ctx));
}

/** Loads PRIVACY_KEY only when a digest is made: `membership add` writes none (control plane). */
export function identityEmailDigest(ctx: CliContext): IdentityEmailDigest {
  let keys: Pseudonymizer | null = null;
  return new IdentityEmailDigest(() => (keys ??= ctx.pseudonymizer()));
}

export async function chatAppsRepository(ctx: CliContext): Promise<ChatPlatformAppsRepository> {
  return new ChatPlatformAppsRepository((await ctx.db()).getRepository(ChatPlatformAppEntity), ctx.secretBox());
}

export async function identityProvidersRepository(ctx: CliContext): Promise<IdentityProvidersRepository> {
  return new IdentityProvidersRepository((await ctx.db()).getRepository(IdentityProviderEntity), ctx.secretBox());
}

/** A customer tenant or an input error: operator commands never act on the control plane's realm. */
export async function customerTenant(ctx: CliContext, id: string): Promise<TenantEntity> {
  const tenant = await (await tenantsRepository(ctx)).find(id);
  if (!tenant || tenant.kind !== 'customer') throw new AdminInputError(`no customer tenant ${id}`);
  return tenant;
}
