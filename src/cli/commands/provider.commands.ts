import { createPrivateKey } from 'node:crypto';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { httpUrl, isCleartextOverNetwork } from '../../config/secure-transport';
import type { ProviderCredential } from '../../directory/identity-providers.repository';
import { AdminInputError, optional, required, type AdminCommand, type OptionValues } from '../admin-command';
import type { CliContext } from '../cli-context';
import { customerTenant, identityProvidersRepository } from './directory-repositories';
import { readDiscovery } from './provider-discovery';
import { readSecretLine, readSecretText } from './secret-input';

/** A provider's id is the `provider` of its identities: `email` and `chat_platform` are taken. */
const PROVIDER_ID = /^[a-z][a-z0-9-]{1,31}$/;
/** RFC 6749 section 3.3 scope tokens. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/;
/** Apple's team and key ids: ten upper-case letters or digits. */
const APPLE_ID = /^[A-Z0-9]{10}$/;

function parseIssuer(value: string, production: boolean): string {
  const url = httpUrl(value);
  if (!url) throw new AdminInputError('--issuer must be an https URL');
  if (production && isCleartextOverNetwork(url)) throw new AdminInputError('--issuer must use https in production');
  if (url.search || url.hash || url.username || url.password)
    throw new AdminInputError('--issuer must not have a query, fragment or userinfo');
  // Kept exactly as given: the ID tokens' `iss` and the discovery document must match it (OIDC Discovery 4.3).
  return value;
}

function words(raw: string | undefined, option: string, pattern: RegExp): string[] {
  const values = (raw ?? '').split(' ').filter(Boolean);
  if (values.some((v) => !pattern.test(v)) || new Set(values).size !== values.length)
    throw new AdminInputError(`--${option} must be unique, space-separated values`);
  return values;
}

/** Either a client secret, or Apple's team id, key id and ES256 private key (contract 14). */
async function credentialOf(v: OptionValues): Promise<ProviderCredential> {
  const secretOnArgv = optional(v, 'client-secret');
  const secretFile = optional(v, 'client-secret-file');
  const apple = [optional(v, 'apple-team-id'), optional(v, 'apple-key-id'), optional(v, 'apple-private-key-file')];
  const appleGiven = apple.some((a) => a !== undefined);
  const secrets = [secretOnArgv, secretFile].filter((s) => s !== undefined).length;
  if (appleGiven ? secrets !== 0 : secrets !== 1)
    throw new AdminInputError(
      'give one of --client-secret-file PATH (or - for stdin), --client-secret, or the three --apple-* options',
    );
  if (!appleGiven) {
    if (secretOnArgv !== undefined) {
      process.stderr.write(
        'warning: --client-secret is readable by other users (ps) and kept in shell history; prefer --client-secret-file PATH, or - for stdin\n',
      );
      return { kind: 'client_secret', secret: secretOnArgv };
    }
    return { kind: 'client_secret', secret: await readSecretLine('client-secret-file', secretFile as string) };
  }
  const [teamId, keyId, keyFile] = apple;
  if (teamId === undefined || keyId === undefined || keyFile === undefined)
    throw new AdminInputError('--apple-team-id, --apple-key-id and --apple-private-key-file go together');
  if (!APPLE_ID.test(teamId) || !APPLE_ID.test(keyId))
    throw new AdminInputError('--apple-team-id and --apple-key-id are ten upper-case letters or digits');
  const privateKeyPem = (await readSecretText('apple-private-key-file', keyFile)).trim();
  try {
    if (!privateKeyPem.startsWith('-----BEGIN PRIVATE KEY-----')) throw new Error();
    const key = createPrivateKey(privateKeyPem);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error();
  } catch {
    throw new AdminInputError(
      '--apple-private-key-file must hold a P-256 private key in PKCS #8 PEM (Apple’s .p8 file)',
    );
  }
  return { kind: 'apple_key', teamId, keyId, privateKeyPem };
}

/** `--tenant` and `--id` of a command about one provider, the tenant checked to be a customer's. */
async function providerOfTenant(ctx: CliContext, v: OptionValues): Promise<{ tenant: string; id: string }> {
  const tenant = required(v, 'tenant');
  const id = required(v, 'id');
  await customerTenant(ctx, tenant);
  return { tenant, id };
}

export const PROVIDER_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'provider add',
    usage:
      'provider add --tenant ID --id NAME --issuer URL --client-id ID (--client-secret-file PATH|- | --client-secret SECRET | --apple-team-id ID --apple-key-id ID --apple-private-key-file PATH) [--scopes "openid email"] [--native-client-ids "id1 id2"]',
    options: {
      tenant: { type: 'string' },
      id: { type: 'string' },
      issuer: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      'client-secret-file': { type: 'string' },
      'apple-team-id': { type: 'string' },
      'apple-key-id': { type: 'string' },
      'apple-private-key-file': { type: 'string' },
      scopes: { type: 'string' },
      'native-client-ids': { type: 'string' },
    },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      const id = required(v, 'id');
      if (!PROVIDER_ID.test(id) || id === 'email')
        throw new AdminInputError('--id must be 2–32 lower-case letters, digits or hyphens, not "email"');
      const issuer = parseIssuer(required(v, 'issuer'), ctx.production());
      const clientId = required(v, 'client-id');
      if (clientId.length > 512) throw new AdminInputError('--client-id is too long');
      const scopes = words(optional(v, 'scopes') ?? 'openid email', 'scopes', SCOPE_TOKEN);
      if (!scopes.includes('openid')) throw new AdminInputError('--scopes must include openid');
      const nativeClientIds = words(optional(v, 'native-client-ids'), 'native-client-ids', /^[\x21-\x7e]{1,512}$/);
      const credential = await credentialOf(v);
      await customerTenant(ctx, tenant);
      const providers = await identityProvidersRepository(ctx);
      if (await providers.hasIdentitiesOfAnotherIssuer(tenant, id, issuer))
        throw new AdminInputError(
          `players of tenant ${tenant} signed in with provider ${id} at another issuer; give this issuer another --id`,
        );
      const endpoints = await readDiscovery(issuer, {
        production: ctx.production(),
        appleKey: credential.kind === 'apple_key',
      });
      const added = await providers.add({
        tenantId: tenant,
        id,
        issuer,
        clientId,
        scopes,
        nativeClientIds,
        endpoints,
        credential,
      });
      if (!added) throw new AdminInputError(`tenant ${tenant} already has a provider ${id}; remove it first`);
      // The audit row names the provider, never its secret or key.
      await ctx.auditAdmin(this.name, tenant, id, { issuer, client_id: clientId });
      return {
        provider: {
          id,
          issuer,
          client_id: clientId,
          scopes,
          native_client_ids: nativeClientIds,
          token_endpoint_auth_method: endpoints.token_endpoint_auth_method,
        },
      };
    },
  },
  {
    name: 'provider list',
    usage: 'provider list --tenant ID',
    options: { tenant: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      await customerTenant(ctx, tenant);
      return { providers: await (await identityProvidersRepository(ctx)).list(tenant) };
    },
  },
  {
    name: 'provider remove',
    usage: 'provider remove --tenant ID --id NAME   (identities it proved stay; flows under way end)',
    options: { tenant: { type: 'string' }, id: { type: 'string' } },
    async run(ctx, v) {
      const { tenant, id } = await providerOfTenant(ctx, v);
      if (!(await (await identityProvidersRepository(ctx)).remove(tenant, id)))
        throw new AdminInputError(`tenant ${tenant} has no provider ${id}`);
      await ctx.auditAdmin(this.name, tenant, id);
      return { removed: { tenant, id } };
    },
  },
  {
    name: 'provider rediscover',
    usage: 'provider rediscover --tenant ID --id NAME   (reads the issuer’s discovery document again)',
    options: { tenant: { type: 'string' }, id: { type: 'string' } },
    async run(ctx, v) {
      const { tenant, id } = await providerOfTenant(ctx, v);
      const providers = await identityProvidersRepository(ctx);
      const provider = await providers.find(tenant, id);
      if (!provider) throw new AdminInputError(`tenant ${tenant} has no provider ${id}`);
      // The same checks as `provider add`; a document that fails them changes nothing.
      const endpoints = await readDiscovery(provider.issuer, {
        production: ctx.production(),
        appleKey: provider.credential.kind === 'apple_key',
      });
      const before: Record<string, unknown> = { ...provider.endpoints };
      const changed = Object.entries(endpoints)
        .filter(([name, value]) => before[name] !== value)
        .map(([name]) => name);
      if (!(await providers.replaceEndpoints(tenant, id, endpoints)))
        throw new AdminInputError(`tenant ${tenant} has no provider ${id}`);
      await ctx.auditAdmin(this.name, tenant, id, { issuer: provider.issuer, changed: changed.join(' ') });
      return { provider: { id, issuer: provider.issuer, ...endpoints }, changed };
    },
  },
  {
    name: 'provider reseal',
    usage: 'provider reseal                  (after a PRIVACY_KEY rotation: re-seal under the first key)',
    options: {},
    async run(ctx) {
      const result = await (await identityProvidersRepository(ctx)).resealAll();
      await ctx.auditAdmin(this.name, CONTROL_PLANE_TENANT_ID, 'identity_providers', {
        resealed: result.resealed,
        unreadable: result.unreadable.length,
      });
      return result;
    },
  },
];
