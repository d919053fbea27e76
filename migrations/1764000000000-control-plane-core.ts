import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Realms, clients, users and their identities. The control plane is the one realm of kind
 * `control_plane` (id `control-plane`, the path segment of its issuer); customer tenants share
 * the same tables so one identity service serves both. Constraints make illegal states
 * unrepresentable: one identity per (tenant, provider, subject), one control-plane realm, and
 * a secret digest exactly for confidential clients.
 */
export class ControlPlaneCore1764000000000 implements MigrationInterface {
  name = 'ControlPlaneCore1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenants (
        id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        kind text NOT NULL CHECK (kind IN ('control_plane', 'customer')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((kind = 'control_plane') = (id = 'control-plane'))
      )`);
    await q.query(`
      CREATE TABLE clients (
        id text PRIMARY KEY CHECK (id ~ '^cli_[A-Za-z0-9_-]{1,64}$'),
        tenant_id text NOT NULL REFERENCES tenants(id),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        type text NOT NULL CHECK (type IN ('confidential', 'browser', 'native')),
        enabled boolean NOT NULL DEFAULT true,
        scopes text[] NOT NULL DEFAULT '{}',
        redirect_uris text[] NOT NULL DEFAULT '{}',
        secret_digest text NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((type = 'confidential') = (secret_digest IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX clients_tenant_idx ON clients (tenant_id)`);
    await q.query(`
      CREATE TABLE users (
        id text PRIMARY KEY CHECK (id ~ '^usr_[A-Za-z0-9_-]{16,64}$'),
        tenant_id text NOT NULL REFERENCES tenants(id),
        kind text NOT NULL CHECK (kind IN ('guest', 'provisional', 'regular')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        deactivated_at timestamptz NULL,
        CHECK ((status = 'deactivated') = (deactivated_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX users_tenant_idx ON users (tenant_id)`);
    await q.query(`
      CREATE TABLE identities (
        id text PRIMARY KEY CHECK (id ~ '^idn_[A-Za-z0-9_-]{16,64}$'),
        tenant_id text NOT NULL REFERENCES tenants(id),
        user_id text NOT NULL REFERENCES users(id),
        provider text NOT NULL CHECK (provider IN ('email', 'chat_platform')),
        provider_subject text NOT NULL CHECK (length(provider_subject) BETWEEN 1 AND 320),
        email text NULL,
        email_verified boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT identities_subject_unique UNIQUE (tenant_id, provider, provider_subject)
      )`);
    await q.query(`CREATE INDEX identities_user_idx ON identities (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE identities`);
    await q.query(`DROP TABLE users`);
    await q.query(`DROP TABLE clients`);
    await q.query(`DROP TABLE tenants`);
  }
}
