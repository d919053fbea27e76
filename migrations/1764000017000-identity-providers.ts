import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tenant's OpenID Connect providers (contract 14). The discovery document is read and checked
 * when the provider is added; the endpoints the flows need are kept from it, so no request waits
 * on the issuer's discovery. The client secret, or for Sign in with Apple the private key its
 * client-secret JWTs are signed with, must be read back, so it is sealed like the chat secret.
 * An identity's `provider` is then `email`, `chat_platform` or the id of one of these providers.
 */
export class IdentityProviders1764000017000 implements MigrationInterface {
  name = 'IdentityProviders1764000017000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity_providers (
        tenant_id text NOT NULL REFERENCES tenants(id),
        id text NOT NULL CHECK (id ~ '^[a-z][a-z0-9-]{1,31}$' AND id <> 'email'),
        issuer text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
        client_id text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 512),
        secret_sealed text NOT NULL,
        secret_kind text NOT NULL CHECK (secret_kind IN ('client_secret', 'apple_key')),
        apple_team_id text NULL,
        apple_key_id text NULL,
        scopes text[] NOT NULL,
        native_client_ids text[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        CHECK ((secret_kind = 'apple_key') = (apple_team_id IS NOT NULL AND apple_key_id IS NOT NULL))
      )`);
    await q.query(`ALTER TABLE identities DROP CONSTRAINT identities_provider_check`);
    await q.query(
      `ALTER TABLE identities ADD CONSTRAINT identities_provider_check CHECK (provider = 'chat_platform' OR provider ~ '^[a-z][a-z0-9-]{1,31}$')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE identities DROP CONSTRAINT identities_provider_check`);
    await q.query(
      `ALTER TABLE identities ADD CONSTRAINT identities_provider_check CHECK (provider IN ('email', 'chat_platform'))`,
    );
    await q.query(`DROP TABLE identity_providers`);
  }
}
