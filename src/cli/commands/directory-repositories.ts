import { ChatPlatformAppsRepository } from '../../directory/chat-platform-apps.repository';
import { ClientsRepository } from '../../directory/clients.repository';
import { IdentitiesRepository } from '../../directory/identities.repository';
import { IdentityEmailDigest } from '../../directory/identity-email-digest';
import { IdentityProvidersRepository } from '../../directory/identity-providers.repository';
import { MembershipsRepository } from '../../directory/memberships.repository';
import type { TenantRecord } from '../../directory/records';
import type { SessionRecordsRepository } from '../../directory/session-records.repository';
import { standaloneRepositories } from '../../directory/standalone-repositories';
import { TenantsRepository } from '../../directory/tenants.repository';
import type { Pseudonymizer } from '../../platform/crypto/digests';
import { AdminInputError } from '../admin-command';
import type { CliContext } from '../cli-context';

/** The service's own repositories, built over the CLI's data source (no Nest container needed). */
export async function tenantsRepository(ctx: CliContext): Promise<TenantsRepository> {
  return standaloneRepositories.tenants(await ctx.db());
}

export async function clientsRepository(ctx: CliContext): Promise<ClientsRepository> {
  return standaloneRepositories.clients(await ctx.db());
}

export async function membershipsRepository(ctx: CliContext): Promise<MembershipsRepository> {
  return standaloneRepositories.memberships(await ctx.db());
}

export async function sessionRecordsRepository(ctx: CliContext): Promise<SessionRecordsRepository> {
  return standaloneRepositories.sessionRecords(await ctx.db());
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
  return standaloneRepositories.chatApps(await ctx.db(), ctx.secretBox());
}

export async function identityProvidersRepository(ctx: CliContext): Promise<IdentityProvidersRepository> {
  return standaloneRepositories.identityProviders(await ctx.db(), ctx.secretBox());
}

/** A customer tenant or an input error: operator commands never act on the control plane's realm. */
export async function customerTenant(ctx: CliContext, id: string): Promise<TenantRecord> {
  const tenant = await (await tenantsRepository(ctx)).find(id);
  if (!tenant || tenant.kind !== 'customer') throw new AdminInputError(`no customer tenant ${id}`);
  return tenant;
}
