import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { SecretBox } from '../platform/crypto/secret-box';
import { IdentityProviderEntity } from '../platform/database/entities/identity-provider.entity';
import { isBoolean, isString, objectDecoder, oneOf, optional } from '../platform/redis/decode';
import { affectedRows, rowsOf } from '../platform/database/row-decoders';

/** What the flows need from the issuer's discovery document, checked and kept when it was added. */
export interface ProviderEndpoints {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly jwks_uri: string;
  /** Contract 14: `client_secret_basic` when discovery lists it or lists none, else `client_secret_post`. */
  readonly token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post';
  /** The issuer's ID token algorithm: RS256 when it offers it, else the first it lists. */
  readonly id_token_signed_response_alg: string;
  /**
   * RFC 9207: the issuer names itself (`iss`) in every authorization response, so an answer without
   * it is refused. Absent from providers added before it was recorded: `iss` is then checked only
   * when an answer carries it.
   */
  readonly authorization_response_iss_parameter_supported?: boolean;
}

const decodeEndpoints = objectDecoder<ProviderEndpoints>({
  authorization_endpoint: isString,
  token_endpoint: isString,
  jwks_uri: isString,
  token_endpoint_auth_method: oneOf('client_secret_basic', 'client_secret_post'),
  id_token_signed_response_alg: isString,
  authorization_response_iss_parameter_supported: optional(isBoolean),
});

/** The endpoints `provider add` stored from discovery; a row of another shape fails loudly. */
function endpointsOf(tenantId: string, id: string, metadata: unknown): ProviderEndpoints {
  const endpoints = decodeEndpoints(metadata);
  if (endpoints === null) throw new Error(`the endpoints of provider ${id} of tenant ${tenantId} are not readable`);
  return endpoints;
}

/** How the service authenticates to the provider's token endpoint. */
export type ProviderCredential =
  | { readonly kind: 'client_secret'; readonly secret: string }
  /** Sign in with Apple: each token request carries a short-lived ES256 JWT signed with this key. */
  | { readonly kind: 'apple_key'; readonly teamId: string; readonly keyId: string; readonly privateKeyPem: string };

export interface IdentityProvider {
  readonly tenantId: string;
  readonly id: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly nativeClientIds: readonly string[];
  readonly endpoints: ProviderEndpoints;
  readonly credential: ProviderCredential;
}

/** What `provider list` shows: never a secret or a key. */
export interface ProviderSummary {
  readonly id: string;
  readonly issuer: string;
  readonly client_id: string;
  readonly scopes: string[];
  readonly native_client_ids: string[];
}

const purpose = (tenantId: string, id: string): string => `identity-provider-secret:${tenantId}:${id}`;

/**
 * A tenant's OpenID Connect providers (contract 14). The client secret (or Apple's private key) is
 * sealed at rest, bound to its tenant and provider, and re-sealed by `provider reseal` after a
 * PRIVACY_KEY rotation, as the chat secret is.
 */
@Injectable()
export class IdentityProvidersRepository {
  constructor(
    @InjectRepository(IdentityProviderEntity) private readonly rows: Repository<IdentityProviderEntity>,
    private readonly box: SecretBox,
  ) {}

  /** Adds the provider; false when the tenant already has one of that id. */
  async add(p: IdentityProvider): Promise<boolean> {
    const secret = p.credential.kind === 'client_secret' ? p.credential.secret : p.credential.privateKeyPem;
    const inserted = rowsOf(
      await this.rows.manager.query(
        `INSERT INTO identity_providers
         (tenant_id, id, issuer, client_id, secret_sealed, secret_kind, apple_team_id, apple_key_id, scopes, native_client_ids, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11::jsonb)
       ON CONFLICT (tenant_id, id) DO NOTHING RETURNING id`,
        [
          p.tenantId,
          p.id,
          p.issuer,
          p.clientId,
          this.box.seal(secret, purpose(p.tenantId, p.id)),
          p.credential.kind,
          p.credential.kind === 'apple_key' ? p.credential.teamId : null,
          p.credential.kind === 'apple_key' ? p.credential.keyId : null,
          p.scopes,
          p.nativeClientIds,
          JSON.stringify(p.endpoints),
        ],
      ),
    );
    return inserted.length === 1;
  }

  async list(tenantId: string): Promise<ProviderSummary[]> {
    const rows = await this.rows.find({ where: { tenantId }, order: { id: 'ASC' } });
    return rows.map((r) => ({
      id: r.id,
      issuer: r.issuer,
      client_id: r.clientId,
      scopes: r.scopes,
      native_client_ids: r.nativeClientIds,
    }));
  }

  async find(tenantId: string, id: string): Promise<IdentityProvider | null> {
    const row = await this.rows.findOneBy({ tenantId, id });
    if (!row) return null;
    const secret = this.box.open(row.secretSealed, purpose(tenantId, id));
    if (secret === null) throw new Error(`the secret of provider ${id} of tenant ${tenantId} cannot be opened`);
    return {
      tenantId,
      id,
      issuer: row.issuer,
      clientId: row.clientId,
      scopes: row.scopes,
      nativeClientIds: row.nativeClientIds,
      endpoints: endpointsOf(tenantId, id, row.metadata),
      credential:
        row.secretKind === 'apple_key' && row.appleTeamId !== null && row.appleKeyId !== null
          ? { kind: 'apple_key', teamId: row.appleTeamId, keyId: row.appleKeyId, privateKeyPem: secret }
          : { kind: 'client_secret', secret },
    };
  }

  /**
   * Whether identities proved under this provider id came from an issuer other than `issuer`. A
   * subject is unique only within its issuer: re-adding the id for another issuer would let that
   * issuer's subjects sign in to the accounts of the first one's. An identity without a recorded
   * issuer (proved before issuers were recorded, of a provider removed before the migration that
   * filled them in) proves nothing either way and does not block.
   */
  async hasIdentitiesOfAnotherIssuer(tenantId: string, id: string, issuer: string): Promise<boolean> {
    const rows = rowsOf(
      await this.rows.manager.query(
        `SELECT 1 FROM identities WHERE tenant_id = $1 AND provider = $2 AND metadata->>'issuer' <> $3 LIMIT 1`,
        [tenantId, id, issuer],
      ),
    );
    return rows.length > 0;
  }

  /** Replaces the endpoints kept from discovery; false when the tenant has no provider of that id. */
  async replaceEndpoints(tenantId: string, id: string, endpoints: ProviderEndpoints): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected count].
    const { affected } = affectedRows(
      await this.rows.manager.query(
        `UPDATE identity_providers SET metadata = $3::jsonb WHERE tenant_id = $1 AND id = $2`,
        [tenantId, id, JSON.stringify(endpoints)],
      ),
    );
    return affected === 1;
  }

  /** Whether the tenant has the provider now, without opening its secret. */
  async isConfigured(tenantId: string, id: string): Promise<boolean> {
    return (await this.rows.countBy({ tenantId, id })) === 1;
  }

  async remove(tenantId: string, id: string): Promise<boolean> {
    return ((await this.rows.delete({ tenantId, id })).affected ?? 0) > 0;
  }

  /** Contract 12 rotation, as `chat reseal`: a row changed since it was read is left to its writer. */
  async resealAll(): Promise<{ resealed: number; current: number; unreadable: string[] }> {
    const result = { resealed: 0, current: 0, unreadable: [] as string[] };
    for (const row of await this.rows.find({ order: { tenantId: 'ASC', id: 'ASC' } })) {
      const opened = this.box.openWithKey(row.secretSealed, purpose(row.tenantId, row.id));
      if (!opened) result.unreadable.push(`${row.tenantId}/${row.id}`);
      else if (opened.current) result.current++;
      else {
        await this.rows.update(
          { tenantId: row.tenantId, id: row.id, secretSealed: row.secretSealed },
          { secretSealed: this.box.seal(opened.plaintext, purpose(row.tenantId, row.id)) },
        );
        result.resealed++;
      }
    }
    return result;
  }
}
